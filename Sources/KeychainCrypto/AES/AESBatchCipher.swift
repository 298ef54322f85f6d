// The AES rounds on a batch of eight bitsliced blocks (see AESBitslice for the layout and why it is
// constant time). Loops run over the round index only, which is public.

extension AESPlanes {
    /// Encrypts the eight states in place with `keys` (an encryption schedule).
    ///
    /// The input must be laid out at column offset `keys.inputOffset`; the output is at offset 0.
    @inline(__always)
    mutating func encrypt(with keys: AESRoundKeys) {
        encrypt(with: keys.unretained)
    }

    /// Encrypts the eight states in place with the schedule `keys` views.
    @inline(__always)
    mutating func encrypt(with keys: AESRoundKeys.Unretained) {
        let roundKeys = keys.planes
        let rounds = keys.rounds
        let start = keys.inputOffset
        addRoundKey(roundKeys)
        // One loop for all rounds, the last without MixColumns, so the S-box circuit appears once in the
        // generated code (it is large; a second copy would also be optimised less well).
        for round in 1...rounds {
            subBytes()
            // ShiftRows is skipped: the stored offset is now start + round.
            if round < rounds { mixColumns(storedOffset: start + round) }
            addRoundKey(roundKeys + 8 * round)
        }
    }

    /// MixColumns on a state stored with column offset `offset` mod 4, with the offset a constant in each case.
    @inline(__always)
    mutating func mixColumns(storedOffset offset: Int) {
        switch offset & 3 {
        case 0: mixColumns(offset: 0)
        case 1: mixColumns(offset: 1)
        case 2: mixColumns(offset: 2)
        default: mixColumns(offset: 3)
        }
    }

    /// Decrypts the eight states in place with `keys` (a decryption schedule).
    ///
    /// The input must be laid out at column offset `keys.inputOffset`; the output is at offset 0.
    @inline(__always)
    mutating func decrypt(with keys: AESRoundKeys) {
        let roundKeys = UnsafePointer(keys.planes)
        let rounds = keys.rounds
        addRoundKey(roundKeys + 8 * rounds)
        for round in stride(from: rounds - 1, through: 0, by: -1) {
            // InvShiftRows is skipped: the stored offset is now `round` (mod 4).
            inverseSubBytes()
            addRoundKey(roundKeys + 8 * round)
            if round > 0 {
                switch round & 3 {
                case 0: inverseMixColumns(offset: 0)
                case 1: inverseMixColumns(offset: 1)
                case 2: inverseMixColumns(offset: 2)
                default: inverseMixColumns(offset: 3)
                }
            }
        }
    }
}

/// Two batches of eight states encrypted together: sixteen blocks.
///
/// The S-box circuit is deep (28 gates, with levels of only one to four gates in the middle), so one batch leaves
/// the vector units idle for part of every round; two independent batches in one loop give the out-of-order core a
/// second chain to fill them with, which takes less time for sixteen blocks than two runs of eight (interleaving
/// the two circuits by hand gate by gate did no better, with twice the spills; a fully unrolled loop was slower,
/// too large for the instruction cache; figures in Docs/Performance.md).
struct AESPlanesPair {
    var first: AESPlanes
    var second: AESPlanes

    /// Encrypts both batches in place with the schedule `keys` views, as ``AESPlanes/encrypt(with:)`` does each.
    @inline(__always)
    mutating func encrypt(with keys: AESRoundKeys.Unretained) {
        let roundKeys = keys.planes
        let rounds = keys.rounds
        let start = keys.inputOffset
        first.addRoundKey(roundKeys)
        second.addRoundKey(roundKeys)
        for round in 1...rounds {
            first.subBytes()
            second.subBytes()
            if round < rounds {
                first.mixColumns(storedOffset: start + round)
                second.mixColumns(storedOffset: start + round)
            }
            first.addRoundKey(roundKeys + 8 * round)
            second.addRoundKey(roundKeys + 8 * round)
        }
    }
}

/// Encrypts or decrypts up to eight independent 16-byte blocks in natural (FIPS 197) byte order.
///
/// Used for single blocks and ECB-style calls, where the byte shuffling into and out of the batch layout
/// is done bytewise; the bulk CTR path in AES-GCM builds its inputs in the batch layout directly.
///
/// - Parameters:
///   - blocks: `16 · count` bytes, transformed in place.
///   - count: 1 … 8.
func transformBlocks(_ blocks: UnsafeMutableRawPointer, count: Int, keys: AESRoundKeys, direction: AESRoundKeys.Direction) {
    withUnsafeTemporaryAllocation(byteCount: 128, alignment: 16) { scratch in
        let batch = scratch.baseAddress!
        batch.initializeMemory(as: UInt8.self, repeating: 0, count: 128)
        for block in 0..<count {
            for natural in 0..<16 {
                let byte = blocks.load(fromByteOffset: 16 * block + natural, as: UInt8.self)
                batch.storeBytes(
                    of: byte, toByteOffset: 16 * block + storedPosition(ofNatural: natural, offset: keys.inputOffset),
                    as: UInt8.self)
            }
        }
        var state = AESPlanes(transposing: UnsafeRawPointer(batch))
        switch direction {
        case .encryption: state.encrypt(with: keys)
        case .decryption: state.decrypt(with: keys)
        }
        state.storeTransposed(to: batch)
        for block in 0..<count {
            for natural in 0..<16 {
                let byte = batch.load(
                    fromByteOffset: 16 * block + storedPosition(ofNatural: natural, offset: 0), as: UInt8.self)
                blocks.storeBytes(of: byte, toByteOffset: 16 * block + natural, as: UInt8.self)
            }
        }
        secureZero(batch, count: 128)
    }
}
