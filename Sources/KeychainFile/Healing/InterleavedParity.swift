/// Reed–Solomon parity over a block of bytes spread across `depth` interleaved codewords, so that a burst
/// of damage — a whole bad sector — costs each codeword only a few symbols.
///
/// Layout: data byte at offset o of the block is symbol ⌊o / depth⌋ of codeword o mod depth; in other
/// words symbol i of codeword j sits at offset i·depth + j. The parity block holds the parity symbols the
/// same way: parity symbol i of codeword j at offset i·depth + j. A contiguous burst of b bytes therefore
/// damages at most ⌈b / depth⌉ symbols of any one codeword, and the code repairs up to n/2 of them at
/// unknown positions. Codewords get ⌈(blockLength − j) / depth⌉ data symbols (shortened codes), which must
/// not exceed 255 − n: so depth ≥ blockLength / (255 − n).
///
/// For example, a 64 KiB block with 32 parity symbols needs depth ≥ 294; at depth 294 any 4 KiB burst
/// costs each codeword at most 14 symbols (≤ 16 correctable) and the parity takes 32 × 294 bytes.
package struct InterleavedParity: Sendable {
    /// The code of every codeword.
    package let code: ReedSolomonCode

    /// The number of interleaved codewords.
    package let depth: Int

    /// The data bytes the block holds.
    package let blockLength: Int

    /// The parity block's length: paritySymbols × depth bytes.
    package var parityLength: Int { code.paritySymbols * depth }

    /// The largest depth accepted; a bound on the parity buffer a caller can be made to allocate.
    package static let maximumDepth = 1 << 20

    /// Makes the layout for blocks of `blockLength` bytes.
    ///
    /// - Parameters:
    ///   - paritySymbols: n per codeword, 2...254.
    ///   - depth: the number of codewords, 1...`maximumDepth`.
    ///   - blockLength: the data bytes per block, 0...depth × (255 − n).
    /// - Throws: `ReedSolomonError.unsupportedParitySymbolCount`, or `.invalidBlockLength` when the block
    ///   does not fit `depth` codewords (or the depth is out of range).
    package init(paritySymbols: Int, depth: Int, blockLength: Int) throws(ReedSolomonError) {
        code = try ReedSolomonCode(paritySymbols: paritySymbols)
        guard (1...Self.maximumDepth).contains(depth) else {
            throw .invalidBlockLength(length: blockLength, expected: "a depth of 1 to \(Self.maximumDepth) codewords, not \(depth)")
        }
        let capacity = depth * code.maximumDataLength
        guard (0...capacity).contains(blockLength) else {
            throw .invalidBlockLength(length: blockLength, expected: "0 to \(capacity) bytes for depth \(depth) (\(code.maximumDataLength) per codeword)")
        }
        self.depth = depth
        self.blockLength = blockLength
    }

    /// The number of data symbols of codeword `index`: the offsets index, index + depth, … below blockLength.
    func dataSymbols(ofCodeword index: Int) -> Int {
        index < blockLength ? (blockLength - index + depth - 1) / depth : 0
    }

    /// The parity block of `block`.
    ///
    /// - Parameter block: exactly `blockLength` bytes.
    /// - Returns: `parityLength` bytes, in the interleaved layout.
    /// - Throws: `ReedSolomonError.invalidBlockLength` when `block` has the wrong length.
    package func parity(of block: [UInt8]) throws(ReedSolomonError) -> [UInt8] {
        guard block.count == blockLength else {
            throw .invalidBlockLength(length: block.count, expected: "exactly \(blockLength) bytes")
        }
        let n = code.paritySymbols
        var parity = [UInt8](repeating: 0, count: parityLength)
        var symbols = [UInt8](repeating: 0, count: code.maximumDataLength)
        var codewordParity = [UInt8](repeating: 0, count: n)
        for j in 0..<depth {
            let count = dataSymbols(ofCodeword: j)
            for i in 0..<count { symbols[i] = block[i * depth + j] }
            symbols.withUnsafeBytes { data in
                codewordParity.withUnsafeMutableBytes { output in
                    // Lengths are within the code by construction (init), so this cannot throw.
                    try? code.parity(of: UnsafeRawBufferPointer(rebasing: data[..<count]), into: output)
                }
            }
            for i in 0..<n { parity[i * depth + j] = codewordParity[i] }
        }
        return parity
    }

    /// Repairs `block` and `parity` in place, codeword by codeword, as far as the parity allows.
    ///
    /// Each codeword is repaired on its own: one with more damage than its parity can repair is left as it
    /// was and listed in `unrepairedCodewords` (its bytes are the offsets ≡ index modulo depth), while the
    /// others are still repaired. Repaired bytes are proposals: the caller confirms them (format v2: with
    /// the records' AES-GCM tags).
    ///
    /// - Parameters:
    ///   - block: exactly `blockLength` bytes.
    ///   - parity: exactly `parityLength` bytes, as `parity(of:)` made them (perhaps damaged too).
    /// - Returns: the changed offsets of `block` and of `parity`, ascending, and the codewords left unrepaired.
    /// - Throws: `ReedSolomonError.invalidBlockLength` when either buffer has the wrong length.
    package func repair(block: inout [UInt8], parity: inout [UInt8]) throws(ReedSolomonError)
        -> (blockOffsets: [Int], parityOffsets: [Int], unrepairedCodewords: [Int])
    {
        guard block.count == blockLength else {
            throw .invalidBlockLength(length: block.count, expected: "exactly \(blockLength) bytes")
        }
        guard parity.count == parityLength else {
            throw .invalidBlockLength(length: parity.count, expected: "exactly \(parityLength) bytes of parity")
        }
        let n = code.paritySymbols
        var blockOffsets: [Int] = [], parityOffsets: [Int] = [], unrepaired: [Int] = []
        var codeword: [UInt8] = []
        codeword.reserveCapacity(ReedSolomonCode.maximumCodewordLength)
        for j in 0..<depth {
            let count = dataSymbols(ofCodeword: j)
            codeword.removeAll(keepingCapacity: true)
            for i in 0..<count { codeword.append(block[i * depth + j]) }
            for i in 0..<n { codeword.append(parity[i * depth + j]) }
            do {
                for position in try code.correct(codeword: &codeword) {
                    if position < count {
                        block[position * depth + j] = codeword[position]
                        blockOffsets.append(position * depth + j)
                    } else {
                        parity[(position - count) * depth + j] = codeword[position]
                        parityOffsets.append((position - count) * depth + j)
                    }
                }
            } catch {
                unrepaired.append(j)
            }
        }
        return (blockOffsets.sorted(), parityOffsets.sorted(), unrepaired)
    }
}
