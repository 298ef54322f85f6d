import KeychainCrypto

/// AES-GCM forgeries for whoever holds the key, which GCM does not resist (its tag is not collision-resistant
/// once the key is known): GHASH is linear in the ciphertext, so other ciphertexts, or other keys, give the same
/// tag. Tests use them to show that what binds a box is not its tag alone. Arithmetic in GF(2¹²⁸) as NIST SP
/// 800-38D §6.3 defines it (bit 0 is the most significant bit of byte 0; R = 0xE1 ‖ 0¹²⁰).
enum GCMForgery {
    /// A field element, bytes 0 … 7 and 8 … 15 big-endian.
    struct Element: Equatable {
        var high: UInt64
        var low: UInt64

        static let zero = Element(high: 0, low: 0)
        static let one = Element(high: 1 << 63, low: 0)

        init(high: UInt64, low: UInt64) {
            self.high = high
            self.low = low
        }

        init(_ bytes: some Collection<UInt8>) {
            precondition(bytes.count == 16)
            let array = Array(bytes)
            high = array[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
            low = array[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
        }

        var bytes: [UInt8] {
            (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64($0))) }
                + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) }
        }

        static func + (a: Element, b: Element) -> Element { Element(high: a.high ^ b.high, low: a.low ^ b.low) }

        static func * (x: Element, y: Element) -> Element {
            var z = Element.zero
            var v = y
            for i in 0..<128 {
                let bit = i < 64 ? (x.high >> (63 - UInt64(i))) & 1 : (x.low >> (127 - UInt64(i))) & 1
                if bit == 1 { z = z + v }
                let carry = v.low & 1
                v.low = (v.low >> 1) | (v.high << 63)
                v.high >>= 1
                if carry == 1 { v.high ^= 0xE1 << 56 }
            }
            return z
        }

        /// x⁻¹ = x^(2¹²⁸ − 2).
        var inverse: Element {
            var power = self
            for _ in 1..<127 { power = power * power * self }
            return power * power
        }
    }

    /// E_K(block).
    static func encrypt(_ block: [UInt8], key: SymmetricKey) throws -> Element {
        var bytes = block
        try AES.permute(&bytes, key: key)
        return Element(bytes)
    }

    /// GHASH_H over `aad` and `ciphertext`, each padded to whole blocks, and their lengths in bits.
    static func ghash(_ h: Element, aad: [UInt8], ciphertext: [UInt8]) -> Element {
        func blocks(_ bytes: [UInt8]) -> [Element] {
            stride(from: 0, to: bytes.count, by: 16).map { start in
                Element(bytes[start..<min(start + 16, bytes.count)] + [UInt8](repeating: 0, count: max(0, start + 16 - bytes.count)))
            }
        }
        let lengths = Element(high: UInt64(aad.count) * 8, low: UInt64(ciphertext.count) * 8)
        return (blocks(aad) + blocks(ciphertext) + [lengths]).reduce(Element.zero) { ($0 + $1) * h }
    }

    /// Another box (nonce ‖ ciphertext ‖ tag) of the same length, nonce and tag as `box`, sealed under `key`
    /// with `aad`: its first two ciphertext blocks changed by Δ and Δ·H, which leaves GHASH as it was. The
    /// ciphertext must hold at least two blocks.
    static func sameTag(as box: [UInt8], key: SymmetricKey, difference: Element) throws -> [UInt8] {
        precondition(box.count >= 12 + 32 + 16)
        let h = try encrypt([UInt8](repeating: 0, count: 16), key: key)
        var forged = box
        let first = Element(box[12..<28]) + difference
        let second = Element(box[28..<44]) + difference * h
        forged.replaceSubrange(12..<28, with: first.bytes)
        forged.replaceSubrange(28..<44, with: second.bytes)
        return forged
    }

    /// A box of a 32-byte ciphertext under `nonce` whose tag verifies under both keys with `aad`: the second
    /// ciphertext block is solved for, the first is `first`.
    static func openingUnderBoth(_ k1: SymmetricKey, _ k2: SymmetricKey, nonce: [UInt8], aad: [UInt8], first: [UInt8]) throws -> [UInt8] {
        let j0 = nonce + [0, 0, 0, 1]
        let h1 = try encrypt([UInt8](repeating: 0, count: 16), key: k1), h2 = try encrypt([UInt8](repeating: 0, count: 16), key: k2)
        let e1 = try encrypt(j0, key: k1), e2 = try encrypt(j0, key: k2)
        let withZero = first + [UInt8](repeating: 0, count: 16)
        let g1 = ghash(h1, aad: aad, ciphertext: withZero), g2 = ghash(h2, aad: aad, ciphertext: withZero)
        // T = E1 + G1 + C2·H1² = E2 + G2 + C2·H2², so C2 = (E1 + E2 + G1 + G2) / (H1² + H2²).
        let second = (e1 + e2 + g1 + g2) * (h1 * h1 + h2 * h2).inverse
        let tag = e1 + g1 + second * h1 * h1
        return nonce + first + second.bytes + tag.bytes
    }
}
