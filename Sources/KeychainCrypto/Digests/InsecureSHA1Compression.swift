//
// SHA-1 compression function (FIPS 180-4 §6.1.2).
//
// Written for clarity rather than speed: SHA-1 is used only to compute identifiers other formats require
// (Apple's public key hash), a few hundred bytes per certificate. The 80 rounds run as four loops of 20,
// one per round function and constant of FIPS 180-4 §4.1.1 and §4.2.1, and the message schedule is kept as
// a rolling window of sixteen words in inline storage (no allocation).

extension Insecure.SHA1 {
    /// The five 32-bit words of a SHA-1 chaining value (H0 … H4 in FIPS 180-4).
    struct State: Sendable, Equatable {
        var h0, h1, h2, h3, h4: UInt32

        /// The initial hash value H(0) of FIPS 180-4 §5.3.1.
        static let initial = State(h0: 0x67452301, h1: 0xefcdab89, h2: 0x98badcfe, h3: 0x10325476, h4: 0xc3d2e1f0)

        /// Compresses `blockCount` consecutive 64-byte blocks starting at `blocks` into this state.
        ///
        /// - Precondition: `blocks` points at `64 * blockCount` readable bytes (checked by every caller).
        mutating func compress(blocks: UnsafeRawPointer, count blockCount: Int) {
            var window = MessageWindow()
            window.withWords { w in
                var p = blocks
                for _ in 0..<blockCount {
                    for t in 0..<16 { w[t] = p.loadBigEndianUInt32(at: 4 &* t) }
                    var (a, b, c, d, e) = (h0, h1, h2, h3, h4)
                    // Each round: T = ROTL⁵(a) + f(b, c, d) + e + K + W;
                    // then e = d, d = c, c = ROTL³⁰(b), b = a, a = T.
                    for t in 0..<20 {
                        let f = d ^ (b & (c ^ d))  // Ch(b, c, d)
                        let temp = rotateLeft(a, 5) &+ f &+ e &+ 0x5a827999 &+ w.next(t)
                        (e, d, c, b, a) = (d, c, rotateLeft(b, 30), a, temp)
                    }
                    for t in 20..<40 {
                        let f = b ^ c ^ d  // Parity(b, c, d)
                        let temp = rotateLeft(a, 5) &+ f &+ e &+ 0x6ed9eba1 &+ w.next(t)
                        (e, d, c, b, a) = (d, c, rotateLeft(b, 30), a, temp)
                    }
                    for t in 40..<60 {
                        let f = (b & c) | (d & (b | c))  // Maj(b, c, d)
                        let temp = rotateLeft(a, 5) &+ f &+ e &+ 0x8f1bbcdc &+ w.next(t)
                        (e, d, c, b, a) = (d, c, rotateLeft(b, 30), a, temp)
                    }
                    for t in 60..<80 {
                        let f = b ^ c ^ d  // Parity(b, c, d)
                        let temp = rotateLeft(a, 5) &+ f &+ e &+ 0xca62c1d6 &+ w.next(t)
                        (e, d, c, b, a) = (d, c, rotateLeft(b, 30), a, temp)
                    }
                    h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d; h4 &+= e
                    p += 64
                }
            }
        }
    }

    /// The last sixteen words of the message schedule, in inline storage.
    struct MessageWindow {
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

        mutating func withWords<Result>(_ body: (UnsafeMutableBufferPointer<UInt32>) -> Result) -> Result {
            Swift.withUnsafeMutableBytes(of: &words) { body($0.bindMemory(to: UInt32.self)) }
        }
    }
}

extension UnsafeMutableBufferPointer where Element == UInt32 {
    /// Returns schedule word W(t) of FIPS 180-4 §6.1.2 step 1, computing it in place for t ≥ 16:
    /// W(t) = ROTL¹(W(t−3) ⊕ W(t−8) ⊕ W(t−14) ⊕ W(t−16)). The buffer holds sixteen words, indexed
    /// mod 16.
    @inline(__always)
    fileprivate func next(_ t: Int) -> UInt32 {
        let s = t & 15
        if t >= 16 {
            self[s] = rotateLeft(self[(s &+ 13) & 15] ^ self[(s &+ 8) & 15] ^ self[(s &+ 2) & 15] ^ self[s], 1)
        }
        return self[s]
    }
}

@inline(__always)
private func rotateLeft(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &<< n) | (x &>> (32 &- n)) }
