extension AES {
    /// AES in Galois/Counter Mode (NIST SP 800-38D): authenticated encryption with additional data.
    ///
    /// Names and shapes follow CryptoKit's `AES.GCM`. Nonces are 96 bits and tags 128 bits; other sizes
    /// are refused. The implementation is constant time (bitsliced AES, multiplication-based GHASH) and
    /// `open` checks the tag before decrypting, so a forged or damaged box yields an error and no bytes.
    ///
    /// For example:
    /// ```swift
    /// let key = SymmetricKey(size: .bits256)
    /// let box = try AES.GCM.seal(Array("secret".utf8), using: key, authenticating: Array("header".utf8))
    /// let stored = box.combined!                       // nonce ‖ ciphertext ‖ tag
    /// let reopened = try AES.GCM.SealedBox(combined: stored)
    /// let message = try AES.GCM.open(reopened, using: key, authenticating: Array("header".utf8))
    /// ```
    public enum GCM: Sendable {
        static let nonceByteCount = 12
        static let tagByteCount = 16

        /// Encrypts and authenticates `message`, also authenticating `authenticatedData`.
        ///
        /// - Parameters:
        ///   - message: The plaintext.
        ///   - key: A 128-, 192- or 256-bit key.
        ///   - nonce: A nonce never used before with this key; `nil` draws a random one.
        ///   - authenticatedData: Data to authenticate but not encrypt (empty if none).
        /// - Returns: The sealed box: nonce, ciphertext and tag.
        /// - Throws: ``CryptoKitError/incorrectKeySize`` for a key of another size;
        ///   ``CryptoKitError/invalidParameter`` for a message longer than GCM allows (2³⁶ − 32 bytes).
        @inlinable
        public static func seal<Plaintext: Sequence, AuthenticatedData: Sequence>(
            _ message: Plaintext, using key: SymmetricKey, nonce: Nonce? = nil,
            authenticating authenticatedData: AuthenticatedData
        ) throws(CryptoKitError) -> SealedBox where Plaintext.Element == UInt8, AuthenticatedData.Element == UInt8 {
            let nonce = nonce ?? Nonce()
            return try withContiguousBytes(of: message) { (plaintext) throws(CryptoKitError) -> SealedBox in
                try withContiguousBytes(of: authenticatedData) { (aad) throws(CryptoKitError) -> SealedBox in
                    try seal(plaintext: plaintext, using: key, nonce: nonce, authenticating: aad)
                }
            }
        }

        /// Encrypts and authenticates `message`.
        ///
        /// - Parameters:
        ///   - message: The plaintext.
        ///   - key: A 128-, 192- or 256-bit key.
        ///   - nonce: A nonce never used before with this key; `nil` draws a random one.
        /// - Returns: The sealed box: nonce, ciphertext and tag.
        /// - Throws: ``CryptoKitError/incorrectKeySize`` for a key of another size;
        ///   ``CryptoKitError/invalidParameter`` for a message longer than GCM allows.
        @inlinable
        public static func seal<Plaintext: Sequence>(
            _ message: Plaintext, using key: SymmetricKey, nonce: Nonce? = nil
        ) throws(CryptoKitError) -> SealedBox where Plaintext.Element == UInt8 {
            try seal(message, using: key, nonce: nonce, authenticating: [UInt8]())
        }

        /// Verifies and decrypts `sealedBox`, which must authenticate `authenticatedData` too.
        ///
        /// - Parameters:
        ///   - sealedBox: The box to open.
        ///   - key: The key it was sealed with.
        ///   - authenticatedData: The additional data given when sealing.
        /// - Returns: The plaintext.
        /// - Throws: ``CryptoKitError/authenticationFailure`` if the key, nonce, ciphertext, tag or
        ///   authenticated data differ from those sealed (no plaintext is produced);
        ///   ``CryptoKitError/incorrectKeySize`` for a key of another size.
        @inlinable
        public static func open<AuthenticatedData: Sequence>(
            _ sealedBox: SealedBox, using key: SymmetricKey, authenticating authenticatedData: AuthenticatedData
        ) throws(CryptoKitError) -> [UInt8] where AuthenticatedData.Element == UInt8 {
            try withContiguousBytes(of: authenticatedData) { (aad) throws(CryptoKitError) -> [UInt8] in
                try open(sealedBox, using: key, authenticatingBytes: aad)
            }
        }

        /// Verifies and decrypts `sealedBox`.
        ///
        /// - Parameters:
        ///   - sealedBox: The box to open.
        ///   - key: The key it was sealed with.
        /// - Returns: The plaintext.
        /// - Throws: ``CryptoKitError/authenticationFailure`` if the box does not verify;
        ///   ``CryptoKitError/incorrectKeySize`` for a key of another size.
        public static func open(_ sealedBox: SealedBox, using key: SymmetricKey) throws(CryptoKitError) -> [UInt8] {
            try open(sealedBox, using: key, authenticatingBytes: UnsafeRawBufferPointer(start: nil, count: 0))
        }

        @usableFromInline
        static func seal(
            plaintext: UnsafeRawBufferPointer, using key: SymmetricKey, nonce: Nonce,
            authenticating aad: UnsafeRawBufferPointer
        ) throws(CryptoKitError) -> SealedBox {
            guard plaintext.count <= AESGCMContext.maximumPlaintextByteCount else { throw .invalidParameter }
            let context = try key.storage.gcmContext()
            let total = nonceByteCount + plaintext.count + tagByteCount
            let combined = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
                let base = UnsafeMutableRawPointer(buffer.baseAddress!)
                nonce.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: nonceByteCount) }
                context.seal(
                    plaintext: plaintext, nonce: UnsafeRawPointer(base), authenticating: aad,
                    ciphertext: base + nonceByteCount, tag: base + nonceByteCount + plaintext.count)
                initialized = total
            }
            return SealedBox(validatedCombined: combined)
        }

        @usableFromInline
        static func open(
            _ sealedBox: SealedBox, using key: SymmetricKey, authenticatingBytes aad: UnsafeRawBufferPointer
        ) throws(CryptoKitError) -> [UInt8] {
            let context = try key.storage.gcmContext()
            let combined = sealedBox.combinedBytes
            let textCount = combined.count - nonceByteCount - tagByteCount
            var verified = false
            let plaintext = combined.withUnsafeBytes { box in
                [UInt8](unsafeUninitializedCapacity: textCount) { buffer, initialized in
                    let base = box.baseAddress!
                    verified = context.open(
                        ciphertext: UnsafeRawBufferPointer(start: base + nonceByteCount, count: textCount),
                        nonce: base, tag: base + nonceByteCount + textCount, authenticating: aad,
                        plaintext: UnsafeMutableRawPointer(buffer.baseAddress!))
                    // Nothing was written on failure; an empty array is returned and then discarded.
                    initialized = verified ? textCount : 0
                }
            }
            guard verified else { throw .authenticationFailure }
            return plaintext
        }
    }
}
