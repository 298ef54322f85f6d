/// A canonical Huffman code of DEFLATE (RFC 1951 §3.2.2), built from its code lengths and decoded one bit at a
/// time: how many codes each length has and the symbols in code order.
struct DeflateHuffmanCode {
    /// How many codes have each length, 0…15.
    private var counts = [Int](repeating: 0, count: 16)
    /// The symbols, ordered by code.
    private var symbols: [Int] = []

    /// How the lengths' code is shaped: `complete` when every bit string leads to a symbol.
    enum Shape { case complete, incomplete }

    /// The code of `lengths` (0 for a symbol without a code).
    ///
    /// - Throws: ``DeflateError`` when the lengths describe more codes than bit strings (over-subscribed).
    init(lengths: [Int]) throws(DeflateError) {
        for length in lengths { counts[length] += 1 }
        var offsets = [Int](repeating: 0, count: 16)
        for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
        symbols = [Int](repeating: 0, count: lengths.count)
        for (symbol, length) in lengths.enumerated() where length != 0 {
            symbols[offsets[length]] = symbol
            offsets[length] += 1
        }
        var left = 1
        for length in 1..<16 {
            left <<= 1
            left -= counts[length]
            guard left >= 0 else { throw DeflateError("a Huffman code has more codes than its lengths allow (over-subscribed)") }
        }
        shape = left == 0 ? .complete : .incomplete
    }

    /// Whether the code is complete.
    private(set) var shape: Shape = .complete

    /// How many symbols have a code.
    var codeCount: Int { counts[1...].reduce(0, +) }

    /// How many codes have length 1.
    var lengthOneCount: Int { counts[1] }

    /// The next symbol of `reader`.
    ///
    /// - Throws: ``DeflateError`` when the bits lead to no symbol (an incomplete code) or the data ends.
    func decode(_ reader: inout DeflateBitReader) throws(DeflateError) -> Int {
        var code = 0, first = 0, index = 0
        for length in 1..<16 {
            code |= try reader.bits(1)
            let count = counts[length]
            if code - count < first { return symbols[index + (code - first)] }
            index += count
            first += count
            first <<= 1
            code <<= 1
        }
        throw DeflateError("the compressed data holds a bit string that is no Huffman code")
    }
}
