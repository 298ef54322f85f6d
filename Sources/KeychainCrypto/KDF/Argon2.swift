import Dispatch

extension KDF {
    /// What the Argon2 key derivations (``KDF/Argon2id``, ``KDF/Argon2i``, ``KDF/Insecure/Argon2d``) share:
    /// the parameter limits, and the computation of RFC 9106 (version 0x13).
    ///
    /// The limits keep a cost read from an untrusted file from exhausting memory or time: every parameter
    /// outside them is a thrown error, checked before anything is allocated. They are far above the
    /// RFC 9106 §4 recommendations (t = 1, m = 2 GiB; t = 3, m = 64 MiB) and any sensible choice for a
    /// password slot; a caller may impose tighter limits of its own.
    ///
    /// For example:
    /// ```swift
    /// let key = try KDF.Argon2id.deriveKey(
    ///     from: Array("correct horse battery staple".utf8), salt: salt, outputByteCount: 32,
    ///     iterations: 3, memoryKiB: 64 * 1024, parallelism: 4)
    /// ```
    public enum Argon2: Sendable {
        /// The Argon2 version implemented, 0x13 (decimal 19), the one RFC 9106 specifies.
        public static let version: UInt32 = 0x13
        /// The least number of passes t.
        public static let minimumIterations = 1
        /// The most passes t accepted: 2^20 (RFC 9106 allows 2^32 − 1).
        public static let maximumIterations = 1 << 20
        /// The most lanes p accepted: 16 (RFC 9106 allows 2^24 − 1). Each lane may run on a thread of its
        /// own, and a key derivation on a phone or laptop has no use for more.
        public static let maximumParallelism = 16
        /// The most memory m accepted, in KiB: 4 GiB (RFC 9106 allows 2^32 − 1 KiB). The least is
        /// `8 · parallelism` KiB, as in RFC 9106.
        public static let maximumMemoryKiB = 4 << 20
        /// The most work accepted, passes × memory in KiB: 2^26, 64 GiB of blocks filled (for example 16
        /// passes over 4 GiB, or 1,024 over 64 MiB), so a hostile choice of both costs still ends in bounded
        /// time.
        public static let maximumWorkKiB = 1 << 26
        /// The shortest salt, in bytes (RFC 9106 §3.1; 16 recommended).
        public static let minimumSaltByteCount = 8
        /// The shortest key (tag), in bytes (RFC 9106 §3.1).
        public static let minimumOutputByteCount = 4
        /// The longest key (tag) accepted, in bytes: 1,024 (RFC 9106 allows 2^32 − 1).
        public static let maximumOutputByteCount = 1024

        /// Checks the parameters, then runs Argon2 (RFC 9106 §3.2) on the given bytes.
        ///
        /// - Throws: ``CryptoKitError/invalidParameter`` if `iterations`, `memoryKiB` or `parallelism` is out
        ///   of range, their work exceeds ``maximumWorkKiB``, or the memory cannot be allocated;
        ///   ``CryptoKitError/incorrectParameterSize`` if `outputByteCount` or the length of the salt,
        ///   password, secret or associated data is out of range.
        /// What every public derivation does: its inputs as contiguous bytes, then the derivation below.
        static func derive<Password: Sequence, Salt: Sequence, AssociatedData: Sequence>(
            variant: Argon2Variant, password: Password, salt: Salt, secret: SymmetricKey, associatedData: AssociatedData,
            outputByteCount: Int, iterations: Int, memoryKiB: Int, parallelism: Int
        ) throws(CryptoKitError) -> SymmetricKey
        where Password.Element == UInt8, Salt.Element == UInt8, AssociatedData.Element == UInt8 {
            let passwordKey = SymmetricKey(data: password)
            return try passwordKey.withUnsafeBytes { (passwordBytes) throws(CryptoKitError) -> SymmetricKey in
                try secret.withUnsafeBytes { (secretBytes) throws(CryptoKitError) -> SymmetricKey in
                    try withContiguousBytes(of: salt) { (saltBytes) throws(CryptoKitError) -> SymmetricKey in
                        try withContiguousBytes(of: associatedData) { (adBytes) throws(CryptoKitError) -> SymmetricKey in
                            try derive(
                                variant: variant, password: passwordBytes, salt: saltBytes, secret: secretBytes,
                                associatedData: adBytes, outputByteCount: outputByteCount, iterations: iterations,
                                memoryKiB: memoryKiB, parallelism: parallelism)
                        }
                    }
                }
            }
        }

        static func derive(
            variant: Argon2Variant, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
            secret: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
            outputByteCount: Int, iterations: Int, memoryKiB: Int, parallelism: Int
        ) throws(CryptoKitError) -> SymmetricKey {
            guard (minimumIterations...maximumIterations).contains(iterations),
                  (1...maximumParallelism).contains(parallelism),
                  (8 * parallelism...maximumMemoryKiB).contains(memoryKiB)
            else { throw .invalidParameter }
            let (work, overflow) = iterations.multipliedReportingOverflow(by: memoryKiB)
            guard !overflow, work <= maximumWorkKiB else { throw .invalidParameter }
            // Lengths are hashed as LE32 (RFC 9106 §3.2 step 1), so each must fit in 32 bits.
            let fits32 = { (count: Int) in UInt64(count) <= UInt64(UInt32.max) }
            guard (minimumOutputByteCount...maximumOutputByteCount).contains(outputByteCount),
                  salt.count >= minimumSaltByteCount, fits32(salt.count), fits32(password.count),
                  fits32(secret.count), fits32(associatedData.count)
            else { throw .incorrectParameterSize }

            // m' = 4p · floor(m / 4p) blocks (§3.2 step 2); m ≥ 8p leaves at least two blocks a segment.
            let memory = try Argon2Memory(blockCount: 4 * parallelism * (memoryKiB / (4 * parallelism)))
            defer { memory.deallocate() }
            let instance = Argon2Instance(memory: memory, variant: variant, lanes: parallelism, passes: iterations)

            // Step 1: H0, followed by room for the two LE32 words of steps 3–4.
            return withUnsafeTemporaryAllocation(byteCount: 72, alignment: 8) { seedBuffer in
                let seed = seedBuffer.baseAddress!
                prehash(
                    variant: variant, password: password, salt: salt, secret: secret, associatedData: associatedData,
                    outputByteCount: outputByteCount, iterations: iterations, memoryKiB: memoryKiB,
                    parallelism: parallelism, into: seed)

                // Steps 3–4: B[i][0] = H'^1024(H0 ‖ LE32(0) ‖ LE32(i)), B[i][1] likewise with LE32(1).
                for lane in 0..<parallelism {
                    for column in 0..<2 {
                        seed.storeBytes(of: UInt32(column).littleEndian, toByteOffset: 64, as: UInt32.self)
                        seed.storeBytes(of: UInt32(lane).littleEndian, toByteOffset: 68, as: UInt32.self)
                        let block = memory.block(lane * instance.laneLength + column)
                        variableHash(into: UnsafeMutableRawBufferPointer(start: block, count: 1024)) {
                            $0.update(bufferPointer: UnsafeRawBufferPointer(seedBuffer))
                        }
                        for k in 0..<Argon2Memory.wordsPerBlock { block[k] = UInt64(littleEndian: block[k]) }
                    }
                }
                secureZero(seed, count: 72)

                // Steps 5–6: every pass, slice by slice; the lanes of a slice are independent.
                for pass in 0..<iterations {
                    for slice in 0..<Argon2Instance.sliceCount {
                        if parallelism == 1 {
                            instance.fillSegment(pass: pass, slice: slice, lane: 0)
                        } else {
                            DispatchQueue.concurrentPerform(iterations: parallelism) { lane in
                                instance.fillSegment(pass: pass, slice: slice, lane: lane)
                            }
                        }
                    }
                }

                // Step 7: C = XOR of the last block of every lane; the tag is H'^T(C).
                return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Argon2Memory.wordsPerBlock) { finalBuffer in
                    let final = finalBuffer.baseAddress!
                    final.update(from: memory.block(instance.laneLength - 1), count: Argon2Memory.wordsPerBlock)
                    for lane in 1..<parallelism {
                        let last = memory.block(lane * instance.laneLength + instance.laneLength - 1)
                        for k in 0..<Argon2Memory.wordsPerBlock { final[k] ^= last[k] }
                    }
                    for k in 0..<Argon2Memory.wordsPerBlock { final[k] = final[k].littleEndian }
                    let key = SymmetricKey(count: outputByteCount) { output in
                        variableHash(into: output) { $0.update(bufferPointer: UnsafeRawBufferPointer(finalBuffer)) }
                    }
                    secureZero(final, count: Argon2Memory.wordsPerBlock * 8)
                    return key
                }
            }
        }

        /// H0 (RFC 9106 §3.2 step 1): the 64-byte BLAKE2b of `LE32(p) ‖ LE32(T) ‖ LE32(m) ‖ LE32(t) ‖ LE32(v)
        /// ‖ LE32(y)` and the password, salt, secret and associated data, each preceded by its LE32 length.
        ///
        /// - Precondition: every length fits in 32 bits, and `output` points at 64 writable bytes.
        static func prehash(
            variant: Argon2Variant, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
            secret: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
            outputByteCount: Int, iterations: Int, memoryKiB: Int, parallelism: Int,
            into output: UnsafeMutableRawPointer
        ) {
            var h0 = BLAKE2b(uncheckedOutputByteCount: 64)
            for value in [parallelism, outputByteCount, memoryKiB, iterations, Int(version), Int(variant.rawValue)] {
                withUnsafeBytes(of: UInt32(value).littleEndian) { h0.update(bufferPointer: $0) }
            }
            for field in [password, salt, secret, associatedData] {
                withUnsafeBytes(of: UInt32(field.count).littleEndian) { h0.update(bufferPointer: $0) }
                h0.update(bufferPointer: field)
            }
            h0.finalize(into: output)
        }
    }
}
