//
// The compression function G of RFC 9106 §3.5 over 1 KiB blocks of 128 words:
//
//     R = X ⊕ Y;  Q = P applied to the eight rows of R, then to the eight columns;  G(X, Y) = Q ⊕ R
//
// viewing R as an 8 × 8 matrix of 16-byte registers (a "row" is 16 consecutive words, a "column" the word
// pairs 2c, 2c + 1 of each row). From the second pass on (version 0x13), the new block is also XORed with
// the block it overwrites.
//
// No branch and no memory index depends on the block contents, so G itself takes the same time for any
// password; which blocks are passed in is the caller's business (RFC 9106 §3.4).

extension KDF.Argon2 {
    /// The number of scratch words ``compress(_:_:into:xoring:scratch:)`` needs.
    static let compressionScratchWords = 256

    /// `next = G(x, y)`, or `next ⊕= G(x, y)` when `xoring`; `y == nil` stands for the all-zero block.
    ///
    /// - Precondition: `x` and `y` point at 128 readable words, `next` at 128 writable words (it may be `x`),
    ///   `scratch` at ``compressionScratchWords`` writable words that overlap none of them.
    @inline(__always)
    static func compress(
        _ x: UnsafePointer<UInt64>, _ y: UnsafePointer<UInt64>?, into next: UnsafeMutablePointer<UInt64>,
        xoring: Bool, scratch: UnsafeMutablePointer<UInt64>
    ) {
        let r = scratch
        let q = scratch + 128
        if let y {
            for k in 0..<128 { r[k] = x[k] ^ y[k] }
        } else {
            r.update(from: x, count: 128)
        }

        // Rows: R → Q.
        for row in 0..<8 {
            let o = 16 * row
            var v = BLAKE2bWorkingVector(UnsafePointer(r), o, o + 1, o + 2, o + 3, o + 4, o + 5, o + 6, o + 7,
                                         o + 8, o + 9, o + 10, o + 11, o + 12, o + 13, o + 14, o + 15)
            v.permuteBlaMka()
            v.store(q, o, o + 1, o + 2, o + 3, o + 4, o + 5, o + 6, o + 7,
                    o + 8, o + 9, o + 10, o + 11, o + 12, o + 13, o + 14, o + 15)
        }
        // Columns: Q in place.
        for column in 0..<8 {
            let o = 2 * column
            var v = BLAKE2bWorkingVector(UnsafePointer(q), o, o + 1, o + 16, o + 17, o + 32, o + 33, o + 48, o + 49,
                                         o + 64, o + 65, o + 80, o + 81, o + 96, o + 97, o + 112, o + 113)
            v.permuteBlaMka()
            v.store(q, o, o + 1, o + 16, o + 17, o + 32, o + 33, o + 48, o + 49,
                    o + 64, o + 65, o + 80, o + 81, o + 96, o + 97, o + 112, o + 113)
        }

        if xoring {
            for k in 0..<128 { next[k] ^= q[k] ^ r[k] }
        } else {
            for k in 0..<128 { next[k] = q[k] ^ r[k] }
        }
    }
}
