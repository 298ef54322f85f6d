// Buffer-based AES-GCM for the KeychainFile module: the same algorithm as `AES.GCM.seal`/`open`, but reading
// and writing caller-owned memory, so that a file's thousands of small records are sealed, verified and opened
// without an allocation each. Exposed as SPI: it is not part of the CryptoKit-shaped public API.

extension AES.GCM {
    /// The bytes a box adds to its plaintext: a 12-byte nonce before the ciphertext and a 16-byte tag after it.
    @_spi(KeychainFileInternals)
    public static let boxOverhead = 28

    /// A key with its AES-GCM context (the bitsliced schedule and the GHASH powers) looked up once, for sealing,
    /// opening and verifying many boxes.
    ///
    /// The calls that take a ``SymmetricKey`` find the key's context under the key's lock and hold a reference
    /// to it for the call; threads sealing or opening the boxes of one record with one key then contend for
    /// that lock and reference count on every box. A prepared key is looked up once, by whoever holds it.
    @_spi(KeychainFileInternals)
    public struct PreparedKey: Sendable {
        let context: AESGCMContext
        /// The GHASH state after associated data that many of this key's messages begin with, if any.
        let prefix: AESGCMAssociatedDataPrefix?

        /// Prepares `key` (16, 24 or 32 bytes).
        ///
        /// - Throws: `CryptoKitError.incorrectKeySize` for other sizes.
        public init(_ key: SymmetricKey) throws(CryptoKitError) {
            context = try key.storage.gcmContext()
            prefix = nil
        }

        private init(context: AESGCMContext, prefix: AESGCMAssociatedDataPrefix?) {
            self.context = context
            self.prefix = prefix
        }

        /// This key, holding as well the GHASH state after the whole 16-byte blocks at the start of `prefix`:
        /// sealing, opening or verifying a message whose associated data begins with those bytes then starts
        /// GHASH there instead of absorbing them again. Tags are bit for bit the same; a message whose
        /// associated data does not begin with them is hashed from the start as usual.
        ///
        /// For example, the boxes of one record, whose associated data shares its first 32 bytes:
        /// ```swift
        /// let recordKey = firstBoxAAD.withUnsafeBytes { key.sharingAssociatedDataPrefix(UnsafeRawBufferPointer(rebasing: $0[..<32])) }
        /// try AES.GCM.verify(box, using: recordKey, authenticating: aad)
        /// ```
        ///
        /// - Parameter prefix: Associated data the messages begin with; only its whole blocks are used.
        /// - Returns: The key with the prefix's state, replacing any it held; with no prefix at all when `prefix`
        ///   is shorter than a block.
        public func sharingAssociatedDataPrefix(_ prefix: UnsafeRawBufferPointer) -> PreparedKey {
            guard prefix.count >= 16 else { return PreparedKey(context: context, prefix: nil) }
            return PreparedKey(context: context, prefix: AESGCMAssociatedDataPrefix(context: context, prefix: prefix))
        }

        /// ``sharingAssociatedDataPrefix(_:)``, and besides: a message whose associated data equals `template`
        /// except in the bytes `publicFields` names starts GHASH after the whole of it, the varying bytes' share
        /// read from `publicFields`' tables. Tags are bit for bit the same.
        ///
        /// Only for varying bytes that are public (see ``PublicFieldTables``). For example, the attributes boxes of
        /// one record, whose associated data differ only in the entry index and the previous box's tag:
        /// ```swift
        /// let fields = try AES.GCM.PublicFieldTables(key: key, associatedDataByteCount: 78, varying: [41..<45, 62..<78])
        /// let recordKey = templateAAD.withUnsafeBytes {
        ///     key.sharingAssociatedData(prefix: UnsafeRawBufferPointer(rebasing: $0[..<32]), template: $0, publicFields: fields)
        /// }
        /// ```
        ///
        /// - Parameters:
        ///   - prefix: Associated data most messages begin with; only its whole blocks are used (at least one).
        ///   - template: Associated data of `publicFields`' length; its bytes at the varying positions are ignored.
        ///   - publicFields: Tables made for this key.
        public func sharingAssociatedData(
            prefix: UnsafeRawBufferPointer, template: UnsafeRawBufferPointer, publicFields: PublicFieldTables
        ) -> PreparedKey {
            precondition(prefix.count >= 16, "a prefix of at least one block")
            precondition(publicFields.tables.context === context, "public-field tables made for this key")
            let made = AESGCMAssociatedDataTemplate(tables: publicFields.tables, template: template)
            return PreparedKey(context: context, prefix: AESGCMAssociatedDataPrefix(context: context, prefix: prefix, template: made))
        }
    }

    /// What the public bytes of associated data of one layout add to its GHASH state, as tables under one key:
    /// see ``PreparedKey/sharingAssociatedData(prefix:template:publicFields:)``.
    ///
    /// The tables are read at addresses given by the varying bytes, so those bytes must be public (a timing
    /// attacker could learn them); they are multiples of powers of the GHASH key and are zeroed when released.
    /// About 0.5 KiB a varying byte.
    @_spi(KeychainFileInternals)
    public final class PublicFieldTables: Sendable {
        let tables: AESGCMPublicFieldTables

        /// Prepares the tables for associated data of `associatedDataByteCount` bytes whose bytes in `varying`
        /// (within the data, not overlapping) change from message to message, under `key`.
        ///
        /// - Throws: `CryptoKitError.invalidParameter` for a length under 8 bytes or ranges outside the data or
        ///   overlapping.
        public init(key: PreparedKey, associatedDataByteCount: Int, varying: [Range<Int>]) throws(CryptoKitError) {
            let positions = varying.flatMap { Array($0) }
            guard associatedDataByteCount >= 8, Set(positions).count == positions.count,
                positions.allSatisfy({ (0..<associatedDataByteCount).contains($0) })
            else { throw .invalidParameter }
            tables = AESGCMPublicFieldTables(context: key.context, byteCount: associatedDataByteCount, varying: varying)
        }
    }

    /// Seals `plaintext` into `box`, which must hold exactly `plaintext.count + 28` bytes:
    /// nonce ‖ ciphertext ‖ tag.
    ///
    /// - Throws: `CryptoKitError.incorrectParameterSize` if `box` has the wrong size;
    ///   `.incorrectKeySize` for a key that is not 16, 24 or 32 bytes; `.invalidParameter` for a plaintext
    ///   longer than GCM allows.
    @_spi(KeychainFileInternals)
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, using key: SymmetricKey, nonce: Nonce,
        authenticating aad: UnsafeRawBufferPointer, into box: UnsafeMutableRawBufferPointer
    ) throws(CryptoKitError) {
        try seal(plaintext, using: PreparedKey(key), nonce: nonce, authenticating: aad, into: box)
    }

    /// Seals as the overload taking a ``SymmetricKey`` does, with a prepared key.
    @_spi(KeychainFileInternals)
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, using key: PreparedKey, nonce: Nonce,
        authenticating aad: UnsafeRawBufferPointer, into box: UnsafeMutableRawBufferPointer
    ) throws(CryptoKitError) {
        guard box.count == plaintext.count + boxOverhead, let base = box.baseAddress else { throw .incorrectParameterSize }
        guard plaintext.count <= AESGCMContext.maximumPlaintextByteCount else { throw .invalidParameter }
        let context = key.context
        nonce.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: nonceByteCount) }
        context.seal(
            plaintext: plaintext, nonce: UnsafeRawPointer(base), authenticating: aad, prefix: key.prefix,
            ciphertext: base + nonceByteCount, tag: base + nonceByteCount + plaintext.count)
    }

    /// Verifies the box (nonce ‖ ciphertext ‖ tag) and decrypts it into `plaintext`, which must hold exactly
    /// `box.count − 28` bytes. Nothing is written unless the tag verifies.
    ///
    /// - Throws: `CryptoKitError.authenticationFailure` if the tag does not verify;
    ///   `.incorrectParameterSize` for a box shorter than 28 bytes or an output of the wrong size;
    ///   `.incorrectKeySize` for a key of another size.
    @_spi(KeychainFileInternals)
    public static func open(
        _ box: UnsafeRawBufferPointer, using key: SymmetricKey, authenticating aad: UnsafeRawBufferPointer,
        into plaintext: UnsafeMutableRawBufferPointer
    ) throws(CryptoKitError) {
        try open(box, using: PreparedKey(key), authenticating: aad, into: plaintext)
    }

    /// Opens as the overload taking a ``SymmetricKey`` does, with a prepared key.
    @_spi(KeychainFileInternals)
    public static func open(
        _ box: UnsafeRawBufferPointer, using key: PreparedKey, authenticating aad: UnsafeRawBufferPointer,
        into plaintext: UnsafeMutableRawBufferPointer
    ) throws(CryptoKitError) {
        guard box.count >= boxOverhead, plaintext.count == box.count - boxOverhead, let base = box.baseAddress else {
            throw .incorrectParameterSize
        }
        let context = key.context
        let textCount = box.count - boxOverhead
        // A zero-length output may have no base address; nothing is written to it then.
        let output = plaintext.baseAddress ?? UnsafeMutableRawPointer(mutating: base)
        let verified = context.open(
            ciphertext: UnsafeRawBufferPointer(start: base + nonceByteCount, count: textCount), nonce: base,
            tag: base + nonceByteCount + textCount, authenticating: aad, prefix: key.prefix, plaintext: output)
        guard verified else { throw .authenticationFailure }
    }

    /// Decrypts the box (nonce ‖ ciphertext ‖ tag) into `plaintext`, which must hold exactly `box.count − 28`
    /// bytes, **without checking its tag**.
    ///
    /// Only for a box whose tag this process has already verified (``open(_:using:authenticating:into:)``,
    /// ``verify(_:using:authenticating:)``, ``firstFailingTag(count:using:box:authenticating:)``) or that it
    /// sealed itself, and that it has kept in its own memory since: bytes read from anywhere else must be
    /// opened. A box that was altered decrypts to altered plaintext here, undetected. What it saves is the
    /// GHASH over the associated data and the ciphertext, most of the cost of opening a short secret.
    ///
    /// For example, a secret whose box was verified when its file was read, decrypted when it is asked for:
    /// ```swift
    /// try AES.GCM.decryptVerified(box, using: key, into: output)
    /// ```
    ///
    /// - Throws: `CryptoKitError.incorrectParameterSize` for a box shorter than 28 bytes or an output of the
    ///   wrong size.
    @_spi(KeychainFileInternals)
    public static func decryptVerified(
        _ box: UnsafeRawBufferPointer, using key: PreparedKey, into plaintext: UnsafeMutableRawBufferPointer
    ) throws(CryptoKitError) {
        guard box.count >= boxOverhead, plaintext.count == box.count - boxOverhead, let base = box.baseAddress else {
            throw .incorrectParameterSize
        }
        let textCount = box.count - boxOverhead
        // A zero-length output may have no base address; nothing is written to it then.
        let output = plaintext.baseAddress ?? UnsafeMutableRawPointer(mutating: base)
        key.context.decryptVerified(
            ciphertext: UnsafeRawBufferPointer(start: base + nonceByteCount, count: textCount), nonce: base, plaintext: output)
    }

    /// Checks the tag of the box (nonce ‖ ciphertext ‖ tag) without decrypting it.
    ///
    /// - Throws: `CryptoKitError.authenticationFailure` if the tag does not verify;
    ///   `.incorrectParameterSize` for a box shorter than 28 bytes; `.incorrectKeySize` for a key of another size.
    @_spi(KeychainFileInternals)
    public static func verify(
        _ box: UnsafeRawBufferPointer, using key: SymmetricKey, authenticating aad: UnsafeRawBufferPointer
    ) throws(CryptoKitError) {
        try verify(box, using: PreparedKey(key), authenticating: aad)
    }

    /// Checks the tags of `count` boxes (1 … ``tagBatchLimit``) as calling ``verify(_:using:authenticating:)``
    /// on each in turn would, stopping at the first that fails, but computes their E(J0) blocks in one run of the
    /// cipher (which encrypts eight blocks at a time however few are needed).
    ///
    /// - Parameters:
    ///   - count: How many boxes, 1 … 8.
    ///   - key: The key.
    ///   - box: The box (nonce ‖ ciphertext ‖ tag) at an index; the memory must stay valid for the call.
    ///   - aad: The associated data of the box at an index; the memory must stay valid for the call.
    /// - Returns: The index of the first box that is shorter than 28 bytes or whose tag does not verify, or
    ///   `nil` when every tag verifies.
    @_spi(KeychainFileInternals)
    public static func firstFailingTag(
        count: Int, using key: PreparedKey, box: (Int) -> UnsafeRawBufferPointer,
        authenticating aad: (Int) -> UnsafeRawBufferPointer
    ) -> Int? {
        key.context.firstFailingTag(count: count, box: box, authenticating: aad, prefix: key.prefix)
    }

    /// The most boxes ``firstFailingTag(count:using:box:authenticating:)`` takes.
    @_spi(KeychainFileInternals)
    public static let tagBatchLimit = AESGCMContext.tagBatchLimit

    /// Verifies as the overload taking a ``SymmetricKey`` does, with a prepared key.
    @_spi(KeychainFileInternals)
    public static func verify(
        _ box: UnsafeRawBufferPointer, using key: PreparedKey, authenticating aad: UnsafeRawBufferPointer
    ) throws(CryptoKitError) {
        guard box.count >= boxOverhead, let base = box.baseAddress else { throw .incorrectParameterSize }
        let context = key.context
        let textCount = box.count - boxOverhead
        let verified = context.verify(
            ciphertext: UnsafeRawBufferPointer(start: base + nonceByteCount, count: textCount), nonce: base,
            tag: base + nonceByteCount + textCount, authenticating: aad, prefix: key.prefix)
        guard verified else { throw .authenticationFailure }
    }
}
