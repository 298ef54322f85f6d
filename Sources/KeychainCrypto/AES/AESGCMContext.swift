// AES-GCM (NIST SP 800-38D) over raw buffers: CTR encryption with the bitsliced batch cipher and GHASH.
//
// Only 96-bit IVs (J0 = IV ‖ 0³¹1) and 128-bit tags. Open verifies the tag over the ciphertext before it
// decrypts anything, so no unauthenticated plaintext is ever written, and compares tags in constant time.
// `decryptVerified` decrypts without a check, for a message whose tag its caller verified before.

/// A prepared AES-GCM key: the bitsliced encryption schedule and the GHASH key H. Reusable for any number
/// of messages, each with its own nonce.
final class AESGCMContext: @unchecked Sendable {
    // `@unchecked Sendable`: every stored property is written in `init` and only read afterwards.
    let keys: AESRoundKeys
    private let ghashKeyStorage: UnsafeMutablePointer<GHASHKey>

    var ghashKey: GHASHKey { ghashKeyStorage.pointee }

    /// The largest plaintext GCM allows under one nonce: 2³² − 2 blocks (SP 800-38D §5.2.1.1).
    static let maximumPlaintextByteCount = (1 << 36) - 32

    /// Prepares `key` (16, 24 or 32 bytes).
    ///
    /// - Throws: `CryptoKitError.incorrectKeySize` for other sizes.
    init(key: UnsafeRawBufferPointer) throws(CryptoKitError) {
        keys = try AESRoundKeys(key: key, direction: .encryption)
        ghashKeyStorage = .allocate(capacity: 1)
        withUnsafeTemporaryAllocation(byteCount: 16, alignment: 16) { block in
            block.initializeMemory(as: UInt8.self, repeating: 0)
            transformBlocks(block.baseAddress!, count: 1, keys: keys, direction: .encryption)
            ghashKeyStorage.initialize(to: GHASHKey(hashSubkey: UnsafeRawPointer(block.baseAddress!)))
            secureZero(block.baseAddress!, count: 16)
        }
    }

    deinit {
        ghashKeyStorage.pointee.wipeAndDeallocate()
        secureZero(UnsafeMutableRawPointer(ghashKeyStorage), count: MemoryLayout<GHASHKey>.size)
        ghashKeyStorage.deallocate()
    }

    /// Encrypts `plaintext` into `ciphertext` (same length; they may be the same buffer) and writes the
    /// 16-byte tag.
    ///
    /// - Precondition: `nonce` is 12 bytes; the plaintext is at most `maximumPlaintextByteCount` bytes.
    func seal(
        plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawPointer, authenticating aad: UnsafeRawBufferPointer,
        prefix: AESGCMAssociatedDataPrefix? = nil, ciphertext: UnsafeMutableRawPointer, tag: UnsafeMutableRawPointer
    ) {
        var stream = CounterStream(context: self, nonce: nonce, byteCount: plaintext.count)
        var hash = hashAssociatedData(aad, prefix: prefix)
        let key = ghashKey
        if let input = plaintext.baseAddress {
            var offset = 0
            while offset < plaintext.count {
                let chunk = min(CounterStream.batchByteCount, plaintext.count - offset)
                stream.apply(to: input + offset, into: ciphertext + offset, count: chunk)
                hash.update(bytes: UnsafeRawPointer(ciphertext + offset), count: chunk, key: key)
                offset += chunk
            }
        }
        hash.updateLengths(authenticatedByteCount: aad.count, ciphertextByteCount: plaintext.count, key: key)
        stream.writeTag(hash, to: tag)
        stream.wipe()
    }

    /// Verifies `tag` over `ciphertext` and `aad`, then decrypts into `plaintext` (same length; may be the
    /// same buffer). Returns `false`, having written nothing, if the tag does not verify. GHASH starts from
    /// `prefix`'s state when `aad` begins with its bytes.
    ///
    /// - Precondition: `nonce` is 12 bytes.
    func open(
        ciphertext: UnsafeRawBufferPointer, nonce: UnsafeRawPointer, tag: UnsafeRawPointer,
        authenticating aad: UnsafeRawBufferPointer, prefix: AESGCMAssociatedDataPrefix? = nil, plaintext: UnsafeMutableRawPointer
    ) -> Bool {
        var stream = CounterStream(context: self, nonce: nonce, byteCount: ciphertext.count)
        guard tagMatches(ciphertext: ciphertext, tag: tag, authenticating: aad, prefix: prefix, stream: stream) else {
            stream.wipe()
            return false
        }
        // `apply` refills the key stream as it goes: no GHASH to interleave here.
        if let input = ciphertext.baseAddress { stream.apply(to: input, into: plaintext, count: ciphertext.count) }
        stream.wipe()
        return true
    }
}

extension AESGCMContext {
    /// Decrypts `ciphertext` into `plaintext` (same length; may be the same buffer) with the key stream of
    /// `nonce`, starting at J0 + 1 as ``open(ciphertext:nonce:tag:authenticating:plaintext:)`` does, but
    /// checks no tag: for a message whose tag was checked before (see ``AES/GCM/decryptVerified(_:using:into:)``).
    ///
    /// - Precondition: `nonce` is 12 bytes.
    func decryptVerified(ciphertext: UnsafeRawBufferPointer, nonce: UnsafeRawPointer, plaintext: UnsafeMutableRawPointer) {
        var stream = CounterStream(context: self, nonce: nonce, byteCount: ciphertext.count)
        // `apply` refills the key stream as it goes: no GHASH to interleave here.
        if let input = ciphertext.baseAddress { stream.apply(to: input, into: plaintext, count: ciphertext.count) }
        stream.wipe()
    }

    /// Returns whether `tag` is the GCM tag of `ciphertext` and `aad` under this key and `nonce`, without
    /// decrypting anything: GHASH over the inputs and E(J0) only. Compares in constant time.
    func verify(
        ciphertext: UnsafeRawBufferPointer, nonce: UnsafeRawPointer, tag: UnsafeRawPointer,
        authenticating aad: UnsafeRawBufferPointer, prefix: AESGCMAssociatedDataPrefix? = nil
    ) -> Bool {
        var stream = CounterStream(context: self, nonce: nonce, byteCount: 0)
        defer { stream.wipe() }
        return tagMatches(ciphertext: ciphertext, tag: tag, authenticating: aad, prefix: prefix, stream: stream)
    }

    /// The most boxes ``firstFailingTag(count:box:authenticating:)`` checks at once: one run of the batch cipher.
    static let tagBatchLimit = 8

    /// Checks the tags of `count` (1 … 8) boxes (nonce ‖ ciphertext ‖ tag, 96-bit nonces) as ``verify(ciphertext:nonce:tag:authenticating:)``
    /// would one by one, but with their E(J0) masks from one run of the batch cipher: one message computes one
    /// block there and the other seven lanes went unused. Returns the index of the first box that is shorter
    /// than a nonce and a tag or whose tag does not verify, `nil` when all verify. The pointers `box` and `aad`
    /// return must stay valid for the call. GHASH starts from `prefix`'s state for the boxes whose associated data
    /// begins with its bytes.
    func firstFailingTag(
        count: Int, box: (Int) -> UnsafeRawBufferPointer, authenticating aad: (Int) -> UnsafeRawBufferPointer,
        prefix: AESGCMAssociatedDataPrefix? = nil
    ) -> Int? {
        precondition(count >= 1 && count <= Self.tagBatchLimit, "1 … 8 boxes")
        return withUnsafeTemporaryAllocation(byteCount: 16 * Self.tagBatchLimit, alignment: 16) { scratch in
            let masks = scratch.baseAddress!
            masks.initializeMemory(as: UInt8.self, repeating: 0, count: scratch.count)
            for index in 0..<count {
                let bytes = box(index)
                // A box too short for a nonce gets a zero counter block; it fails below, before its mask is used.
                if bytes.count >= 28, let base = bytes.baseAddress {
                    (masks + 16 * index).copyMemory(from: base, byteCount: 12)
                }
                // J0 = nonce ‖ 0x00000001.
                masks.storeBytes(of: 1, toByteOffset: 16 * index + 15, as: UInt8.self)
            }
            transformBlocks(masks, count: count, keys: keys, direction: .encryption)
            var failing: Int? = nil
            for index in 0..<count {
                let bytes = box(index)
                guard bytes.count >= 28, let base = bytes.baseAddress else {
                    failing = index
                    break
                }
                let textCount = bytes.count - 28
                let ciphertext = UnsafeRawBufferPointer(start: base + 12, count: textCount)
                let hash = authenticationHash(aad: aad(index), prefix: prefix, ciphertext: ciphertext)
                // The expected tag, GHASH ⊕ E(J0), overwrites the mask it used.
                let mask = UnsafeMutableRawPointer(masks + 16 * index)
                mask.storeBigEndian(hash.high ^ UnsafeRawPointer(mask).loadBigEndianUInt64(at: 0), at: 0)
                mask.storeBigEndian(hash.low ^ UnsafeRawPointer(mask).loadBigEndianUInt64(at: 8), at: 8)
                let matches = constantTimeEquals(
                    UnsafeRawBufferPointer(start: mask, count: 16), UnsafeRawBufferPointer(start: base + 12 + textCount, count: 16))
                if !matches {
                    failing = index
                    break
                }
            }
            secureZero(masks, count: scratch.count)
            return failing
        }
    }

    /// GHASH of `aad` and `ciphertext`, masked with the stream's E(J0), compared with `tag` in constant time.
    fileprivate func tagMatches(
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawPointer, authenticating aad: UnsafeRawBufferPointer,
        prefix: AESGCMAssociatedDataPrefix?, stream: CounterStream
    ) -> Bool {
        let hash = authenticationHash(aad: aad, prefix: prefix, ciphertext: ciphertext)
        return withUnsafeTemporaryAllocation(byteCount: 16, alignment: 16) { expected in
            stream.writeTag(hash, to: expected.baseAddress!)
            let result = constantTimeEquals(UnsafeRawBufferPointer(expected), UnsafeRawBufferPointer(start: tag, count: 16))
            secureZero(expected.baseAddress!, count: 16)
            return result
        }
    }
}

extension AESPlanes {
    /// Transposes the planes back into eight blocks (at offset 0) and writes them in natural (FIPS 197,
    /// column-major) byte order to `output` (128 bytes, 16-byte aligned).
    @inline(__always)
    func writeNaturalBlocks(to output: UnsafeMutableRawPointer) {
        var copy = self
        copy.transpose()
        @inline(__always) func store(_ plane: Plane, _ index: Int) {
            let bytes = unsafeBitCast(plane, to: SIMD16<UInt8>.self)
            // Row-major (4r + c) to column-major (r + 4c): a 4 × 4 byte transpose.
            let natural = SIMD16<UInt8>(
                bytes[0], bytes[4], bytes[8], bytes[12], bytes[1], bytes[5], bytes[9], bytes[13],
                bytes[2], bytes[6], bytes[10], bytes[14], bytes[3], bytes[7], bytes[11], bytes[15])
            (output + 16 * index).storeBytes(of: natural, as: SIMD16<UInt8>.self)
        }
        store(copy.q0, 0); store(copy.q1, 1); store(copy.q2, 2); store(copy.q3, 3)
        store(copy.q4, 4); store(copy.q5, 5); store(copy.q6, 6); store(copy.q7, 7)
    }
}
