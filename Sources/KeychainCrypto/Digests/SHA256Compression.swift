//
// SHA-256 compression function (FIPS 180-4 §6.2.2), fully unrolled.
//
// The eight working variables and the sixteen-word message schedule live in local variables so that the
// optimiser keeps them in registers; the schedule is computed in place, sixteen words at a time. The
// round constants are immediates. There is no table indexed by data and no branch on data.
//
// The 64 rounds are spelled out, one line each, with the constants of FIPS 180-4 §4.2.2 (the list was
// produced once by a throwaway script and checked against the standard's table); the working variables
// rotate names from round to round instead of being shuffled.

extension SHA256 {
    /// The eight 32-bit words of a SHA-256 chaining value (H0 … H7 in FIPS 180-4).
    struct State: Sendable, Equatable {
        var h0, h1, h2, h3, h4, h5, h6, h7: UInt32

        /// The initial hash value H(0) of FIPS 180-4 §5.3.3.
        static let initial = State(
            h0: 0x6a09e667, h1: 0xbb67ae85, h2: 0x3c6ef372, h3: 0xa54ff53a,
            h4: 0x510e527f, h5: 0x9b05688c, h6: 0x1f83d9ab, h7: 0x5be0cd19)

        init(h0: UInt32, h1: UInt32, h2: UInt32, h3: UInt32, h4: UInt32, h5: UInt32, h6: UInt32, h7: UInt32) {
            (self.h0, self.h1, self.h2, self.h3) = (h0, h1, h2, h3)
            (self.h4, self.h5, self.h6, self.h7) = (h4, h5, h6, h7)
        }

        /// Compresses `blockCount` consecutive 64-byte blocks starting at `blocks` into this state.
        ///
        /// - Precondition: `blocks` points at `64 * blockCount` readable bytes (checked by every caller).
        mutating func compress(blocks: UnsafeRawPointer, count blockCount: Int) {
            var p = blocks
            for _ in 0..<blockCount {
                compress(
                    p.loadBigEndianUInt32(at: 0), p.loadBigEndianUInt32(at: 4),
                    p.loadBigEndianUInt32(at: 8), p.loadBigEndianUInt32(at: 12),
                    p.loadBigEndianUInt32(at: 16), p.loadBigEndianUInt32(at: 20),
                    p.loadBigEndianUInt32(at: 24), p.loadBigEndianUInt32(at: 28),
                    p.loadBigEndianUInt32(at: 32), p.loadBigEndianUInt32(at: 36),
                    p.loadBigEndianUInt32(at: 40), p.loadBigEndianUInt32(at: 44),
                    p.loadBigEndianUInt32(at: 48), p.loadBigEndianUInt32(at: 52),
                    p.loadBigEndianUInt32(at: 56), p.loadBigEndianUInt32(at: 60))
                p += 64
            }
        }

        /// Compresses one block given as its sixteen big-endian message words.
        ///
        /// Callers that know some words at compile time (PBKDF2's padded 32-byte messages) pass them as
        /// literals; after inlining, the optimiser folds the parts of the schedule that depend only on them.
        @inline(__always)
        mutating func compress(
            _ w0: UInt32, _ w1: UInt32, _ w2: UInt32, _ w3: UInt32,
            _ w4: UInt32, _ w5: UInt32, _ w6: UInt32, _ w7: UInt32,
            _ w8: UInt32, _ w9: UInt32, _ w10: UInt32, _ w11: UInt32,
            _ w12: UInt32, _ w13: UInt32, _ w14: UInt32, _ w15: UInt32
        ) {
            var (w0, w1, w2, w3, w4, w5, w6, w7) = (w0, w1, w2, w3, w4, w5, w6, w7)
            var (w8, w9, w10, w11, w12, w13, w14, w15) = (w8, w9, w10, w11, w12, w13, w14, w15)
            var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
            // b XOR c of the coming round (see `step`).
            var bc = b ^ c

        step(a, b, &d, e, f, g, &h, &bc, 0x428a2f98, w0)
        step(h, a, &c, d, e, f, &g, &bc, 0x71374491, w1)
        step(g, h, &b, c, d, e, &f, &bc, 0xb5c0fbcf, w2)
        step(f, g, &a, b, c, d, &e, &bc, 0xe9b5dba5, w3)
        step(e, f, &h, a, b, c, &d, &bc, 0x3956c25b, w4)
        step(d, e, &g, h, a, b, &c, &bc, 0x59f111f1, w5)
        step(c, d, &f, g, h, a, &b, &bc, 0x923f82a4, w6)
        step(b, c, &e, f, g, h, &a, &bc, 0xab1c5ed5, w7)
        step(a, b, &d, e, f, g, &h, &bc, 0xd807aa98, w8)
        step(h, a, &c, d, e, f, &g, &bc, 0x12835b01, w9)
        step(g, h, &b, c, d, e, &f, &bc, 0x243185be, w10)
        step(f, g, &a, b, c, d, &e, &bc, 0x550c7dc3, w11)
        step(e, f, &h, a, b, c, &d, &bc, 0x72be5d74, w12)
        step(d, e, &g, h, a, b, &c, &bc, 0x80deb1fe, w13)
        step(c, d, &f, g, h, a, &b, &bc, 0x9bdc06a7, w14)
        step(b, c, &e, f, g, h, &a, &bc, 0xc19bf174, w15)
        w0 = sigma1(w14) &+ w9 &+ sigma0(w1) &+ w0
        step(a, b, &d, e, f, g, &h, &bc, 0xe49b69c1, w0)
        w1 = sigma1(w15) &+ w10 &+ sigma0(w2) &+ w1
        step(h, a, &c, d, e, f, &g, &bc, 0xefbe4786, w1)
        w2 = sigma1(w0) &+ w11 &+ sigma0(w3) &+ w2
        step(g, h, &b, c, d, e, &f, &bc, 0x0fc19dc6, w2)
        w3 = sigma1(w1) &+ w12 &+ sigma0(w4) &+ w3
        step(f, g, &a, b, c, d, &e, &bc, 0x240ca1cc, w3)
        w4 = sigma1(w2) &+ w13 &+ sigma0(w5) &+ w4
        step(e, f, &h, a, b, c, &d, &bc, 0x2de92c6f, w4)
        w5 = sigma1(w3) &+ w14 &+ sigma0(w6) &+ w5
        step(d, e, &g, h, a, b, &c, &bc, 0x4a7484aa, w5)
        w6 = sigma1(w4) &+ w15 &+ sigma0(w7) &+ w6
        step(c, d, &f, g, h, a, &b, &bc, 0x5cb0a9dc, w6)
        w7 = sigma1(w5) &+ w0 &+ sigma0(w8) &+ w7
        step(b, c, &e, f, g, h, &a, &bc, 0x76f988da, w7)
        w8 = sigma1(w6) &+ w1 &+ sigma0(w9) &+ w8
        step(a, b, &d, e, f, g, &h, &bc, 0x983e5152, w8)
        w9 = sigma1(w7) &+ w2 &+ sigma0(w10) &+ w9
        step(h, a, &c, d, e, f, &g, &bc, 0xa831c66d, w9)
        w10 = sigma1(w8) &+ w3 &+ sigma0(w11) &+ w10
        step(g, h, &b, c, d, e, &f, &bc, 0xb00327c8, w10)
        w11 = sigma1(w9) &+ w4 &+ sigma0(w12) &+ w11
        step(f, g, &a, b, c, d, &e, &bc, 0xbf597fc7, w11)
        w12 = sigma1(w10) &+ w5 &+ sigma0(w13) &+ w12
        step(e, f, &h, a, b, c, &d, &bc, 0xc6e00bf3, w12)
        w13 = sigma1(w11) &+ w6 &+ sigma0(w14) &+ w13
        step(d, e, &g, h, a, b, &c, &bc, 0xd5a79147, w13)
        w14 = sigma1(w12) &+ w7 &+ sigma0(w15) &+ w14
        step(c, d, &f, g, h, a, &b, &bc, 0x06ca6351, w14)
        w15 = sigma1(w13) &+ w8 &+ sigma0(w0) &+ w15
        step(b, c, &e, f, g, h, &a, &bc, 0x14292967, w15)
        w0 = sigma1(w14) &+ w9 &+ sigma0(w1) &+ w0
        step(a, b, &d, e, f, g, &h, &bc, 0x27b70a85, w0)
        w1 = sigma1(w15) &+ w10 &+ sigma0(w2) &+ w1
        step(h, a, &c, d, e, f, &g, &bc, 0x2e1b2138, w1)
        w2 = sigma1(w0) &+ w11 &+ sigma0(w3) &+ w2
        step(g, h, &b, c, d, e, &f, &bc, 0x4d2c6dfc, w2)
        w3 = sigma1(w1) &+ w12 &+ sigma0(w4) &+ w3
        step(f, g, &a, b, c, d, &e, &bc, 0x53380d13, w3)
        w4 = sigma1(w2) &+ w13 &+ sigma0(w5) &+ w4
        step(e, f, &h, a, b, c, &d, &bc, 0x650a7354, w4)
        w5 = sigma1(w3) &+ w14 &+ sigma0(w6) &+ w5
        step(d, e, &g, h, a, b, &c, &bc, 0x766a0abb, w5)
        w6 = sigma1(w4) &+ w15 &+ sigma0(w7) &+ w6
        step(c, d, &f, g, h, a, &b, &bc, 0x81c2c92e, w6)
        w7 = sigma1(w5) &+ w0 &+ sigma0(w8) &+ w7
        step(b, c, &e, f, g, h, &a, &bc, 0x92722c85, w7)
        w8 = sigma1(w6) &+ w1 &+ sigma0(w9) &+ w8
        step(a, b, &d, e, f, g, &h, &bc, 0xa2bfe8a1, w8)
        w9 = sigma1(w7) &+ w2 &+ sigma0(w10) &+ w9
        step(h, a, &c, d, e, f, &g, &bc, 0xa81a664b, w9)
        w10 = sigma1(w8) &+ w3 &+ sigma0(w11) &+ w10
        step(g, h, &b, c, d, e, &f, &bc, 0xc24b8b70, w10)
        w11 = sigma1(w9) &+ w4 &+ sigma0(w12) &+ w11
        step(f, g, &a, b, c, d, &e, &bc, 0xc76c51a3, w11)
        w12 = sigma1(w10) &+ w5 &+ sigma0(w13) &+ w12
        step(e, f, &h, a, b, c, &d, &bc, 0xd192e819, w12)
        w13 = sigma1(w11) &+ w6 &+ sigma0(w14) &+ w13
        step(d, e, &g, h, a, b, &c, &bc, 0xd6990624, w13)
        w14 = sigma1(w12) &+ w7 &+ sigma0(w15) &+ w14
        step(c, d, &f, g, h, a, &b, &bc, 0xf40e3585, w14)
        w15 = sigma1(w13) &+ w8 &+ sigma0(w0) &+ w15
        step(b, c, &e, f, g, h, &a, &bc, 0x106aa070, w15)
        w0 = sigma1(w14) &+ w9 &+ sigma0(w1) &+ w0
        step(a, b, &d, e, f, g, &h, &bc, 0x19a4c116, w0)
        w1 = sigma1(w15) &+ w10 &+ sigma0(w2) &+ w1
        step(h, a, &c, d, e, f, &g, &bc, 0x1e376c08, w1)
        w2 = sigma1(w0) &+ w11 &+ sigma0(w3) &+ w2
        step(g, h, &b, c, d, e, &f, &bc, 0x2748774c, w2)
        w3 = sigma1(w1) &+ w12 &+ sigma0(w4) &+ w3
        step(f, g, &a, b, c, d, &e, &bc, 0x34b0bcb5, w3)
        w4 = sigma1(w2) &+ w13 &+ sigma0(w5) &+ w4
        step(e, f, &h, a, b, c, &d, &bc, 0x391c0cb3, w4)
        w5 = sigma1(w3) &+ w14 &+ sigma0(w6) &+ w5
        step(d, e, &g, h, a, b, &c, &bc, 0x4ed8aa4a, w5)
        w6 = sigma1(w4) &+ w15 &+ sigma0(w7) &+ w6
        step(c, d, &f, g, h, a, &b, &bc, 0x5b9cca4f, w6)
        w7 = sigma1(w5) &+ w0 &+ sigma0(w8) &+ w7
        step(b, c, &e, f, g, h, &a, &bc, 0x682e6ff3, w7)
        w8 = sigma1(w6) &+ w1 &+ sigma0(w9) &+ w8
        step(a, b, &d, e, f, g, &h, &bc, 0x748f82ee, w8)
        w9 = sigma1(w7) &+ w2 &+ sigma0(w10) &+ w9
        step(h, a, &c, d, e, f, &g, &bc, 0x78a5636f, w9)
        w10 = sigma1(w8) &+ w3 &+ sigma0(w11) &+ w10
        step(g, h, &b, c, d, e, &f, &bc, 0x84c87814, w10)
        w11 = sigma1(w9) &+ w4 &+ sigma0(w12) &+ w11
        step(f, g, &a, b, c, d, &e, &bc, 0x8cc70208, w11)
        w12 = sigma1(w10) &+ w5 &+ sigma0(w13) &+ w12
        step(e, f, &h, a, b, c, &d, &bc, 0x90befffa, w12)
        w13 = sigma1(w11) &+ w6 &+ sigma0(w14) &+ w13
        step(d, e, &g, h, a, b, &c, &bc, 0xa4506ceb, w13)
        w14 = sigma1(w12) &+ w7 &+ sigma0(w15) &+ w14
        step(c, d, &f, g, h, a, &b, &bc, 0xbef9a3f7, w14)
        w15 = sigma1(w13) &+ w8 &+ sigma0(w0) &+ w15
        step(b, c, &e, f, g, h, &a, &bc, 0xc67178f2, w15)


            h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
            h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
        }
    }
}

/// One SHA-256 round (FIPS 180-4 §6.2.2 step 3) with the working variables passed by position:
/// `d` receives `d + T1` and `h` receives `T1 + T2`; the caller renames the variables for the next round.
///
/// Maj(a, b, c) is computed as b ⊕ ((a ⊕ b) ∧ (b ⊕ c)). The next round's (b ⊕ c) is this round's (a ⊕ b),
/// so `bc` carries it from round to round and each Maj costs three operations.
@inline(__always)
private func step(
    _ a: UInt32, _ b: UInt32, _ d: inout UInt32,
    _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32,
    _ bc: inout UInt32, _ k: UInt32, _ w: UInt32
) {
    let t1 = h &+ bigSigma1(e) &+ choose(e, f, g) &+ k &+ w
    let ab = a ^ b
    let majority = b ^ (ab & bc)
    bc = ab
    let t2 = bigSigma0(a) &+ majority
    d &+= t1
    h = t1 &+ t2
}

@inline(__always)
private func rotateRight(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &>> n) | (x &<< (32 &- n)) }

/// Σ0(x) = ROTR²(x) ⊕ ROTR¹³(x) ⊕ ROTR²²(x), nested so that every rotation works on one running value
/// (x86 rotates in place; three independent rotations would each need a copy of x first).
@inline(__always)
private func bigSigma0(_ x: UInt32) -> UInt32 { rotateRight(rotateRight(rotateRight(x, 9) ^ x, 11) ^ x, 2) }

/// Σ1(x) = ROTR⁶(x) ⊕ ROTR¹¹(x) ⊕ ROTR²⁵(x), nested like Σ0.
@inline(__always)
private func bigSigma1(_ x: UInt32) -> UInt32 { rotateRight(rotateRight(rotateRight(x, 14) ^ x, 5) ^ x, 6) }

/// σ0(x) = ROTR⁷(x) ⊕ ROTR¹⁸(x) ⊕ SHR³(x), the rotations nested as in Σ0.
@inline(__always)
private func sigma0(_ x: UInt32) -> UInt32 { rotateRight(rotateRight(x, 11) ^ x, 7) ^ (x &>> 3) }

/// σ1(x) = ROTR¹⁷(x) ⊕ ROTR¹⁹(x) ⊕ SHR¹⁰(x), the rotations nested as in Σ0.
@inline(__always)
private func sigma1(_ x: UInt32) -> UInt32 { rotateRight(rotateRight(x, 2) ^ x, 17) ^ (x &>> 10) }

/// Ch(x, y, z) = (x AND y) XOR (NOT x AND z), written with one fewer operation.
@inline(__always)
private func choose(_ x: UInt32, _ y: UInt32, _ z: UInt32) -> UInt32 { z ^ (x & (y ^ z)) }

