extension KDF.Argon2 {
    /// H' (RFC 9106 §3.3): BLAKE2b stretched to `output.count` bytes, of `LE32(output.count) ‖ input`,
    /// where `feed` adds the input to the hasher it is given.
    ///
    /// Up to 64 bytes it is one BLAKE2b with that output length. Longer outputs chain 64-byte BLAKE2b
    /// digests V1, V2, …, taking the first 32 bytes of each, and end with one digest of the remaining
    /// 33–64 bytes.
    ///
    /// - Precondition: `output.count ≥ 1` and fits in 32 bits (checked by the callers).
    static func variableHash(into output: UnsafeMutableRawBufferPointer, _ feed: (inout BLAKE2b) -> Void) {
        let total = output.count
        let base = output.baseAddress!
        var first = BLAKE2b(uncheckedOutputByteCount: min(total, 64))
        withUnsafeBytes(of: UInt32(total).littleEndian) { first.update(bufferPointer: $0) }
        feed(&first)
        if total <= 64 {
            first.finalize(into: base)
            return
        }

        // r = ceil(T / 32) − 2 digests of 64 bytes, of which the first 32 bytes are output, then V_{r+1}.
        let r = (total + 31) / 32 - 2
        withUnsafeTemporaryAllocation(byteCount: 64, alignment: 8) { chain in
            let v = chain.baseAddress!
            first.finalize(into: v)
            base.copyMemory(from: v, byteCount: 32)
            for index in 1..<r {
                var next = BLAKE2b(uncheckedOutputByteCount: 64)
                next.update(bufferPointer: UnsafeRawBufferPointer(chain))
                next.finalize(into: v)
                (base + 32 * index).copyMemory(from: v, byteCount: 32)
            }
            var last = BLAKE2b(uncheckedOutputByteCount: total - 32 * r)
            last.update(bufferPointer: UnsafeRawBufferPointer(chain))
            last.finalize(into: base + 32 * r)
            secureZero(v, count: 64)
        }
    }
}
