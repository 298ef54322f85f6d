/// The sixteen 48-bit round keys of DES (FIPS 46-3) for one 8-byte key, and the DES block function with them.
///
/// A plain bit-by-bit implementation of the standard's tables: slow, and its table lookups depend on the
/// data, so it is used only to read legacy files behind their MAC (see ``Insecure/TripleDES``).
struct DESKeySchedule {
    /// The round keys, in the order encryption uses them, each in the low 48 bits.
    private let roundKeys: [UInt64]

    /// Expands `key` (8 bytes; the parity bits are ignored).
    init(key: [UInt8]) {
        var value: UInt64 = 0
        for byte in key { value = value << 8 | UInt64(byte) }
        let permuted = DESTables.permute(value, DESTables.permutedChoice1, inputBitCount: 64)
        var c = permuted >> 28
        var d = permuted & 0x0fff_ffff
        var keys: [UInt64] = []
        keys.reserveCapacity(16)
        for shift in DESTables.rotations {
            c = (c << shift | c >> (28 - shift)) & 0x0fff_ffff
            d = (d << shift | d >> (28 - shift)) & 0x0fff_ffff
            keys.append(DESTables.permute(c << 28 | d, DESTables.permutedChoice2, inputBitCount: 56))
        }
        roundKeys = keys
    }

    /// DES encryption of one block (the bytes as a big-endian integer).
    func encrypt(_ block: UInt64) -> UInt64 { transform(block, keys: roundKeys) }

    /// DES decryption of one block: the rounds with the keys in reverse order.
    func decrypt(_ block: UInt64) -> UInt64 { transform(block, keys: roundKeys.reversed()) }

    private func transform(_ block: UInt64, keys: [UInt64]) -> UInt64 {
        let permuted = DESTables.permute(block, DESTables.initialPermutation, inputBitCount: 64)
        var left = permuted >> 32
        var right = permuted & 0xffff_ffff
        for key in keys {
            (left, right) = (right, left ^ Self.feistel(right, key))
        }
        return DESTables.permute(right << 32 | left, DESTables.finalPermutation, inputBitCount: 64)
    }

    /// The round function f(R, K): expand, mix in the key, substitute through the S-boxes, permute.
    private static func feistel(_ half: UInt64, _ key: UInt64) -> UInt64 {
        let mixed = DESTables.permute(half, DESTables.expansion, inputBitCount: 32) ^ key
        var substituted: UInt64 = 0
        for box in 0..<8 {
            let six = Int(mixed >> UInt64(42 - 6 * box) & 0x3f)
            let row = (six >> 4 & 2) | (six & 1)
            let column = six >> 1 & 0xf
            substituted = substituted << 4 | UInt64(DESTables.substitution[box][row * 16 + column])
        }
        return DESTables.permute(substituted, DESTables.permutation, inputBitCount: 32)
    }
}
