/// A strict DEFLATE decoder (RFC 1951): stored, fixed-Huffman and dynamic-Huffman blocks.
///
/// Hostile input is an error, never a crash or unbounded work: over-subscribed or incomplete codes (but a
/// single one-bit code, which RFC 1951 allows), code lengths that repeat nothing or run past their table,
/// length and distance symbols out of range, distances before the start of the output, stored blocks whose
/// length does not match its complement, and output beyond `maximumOutput` are all refused.
enum Inflater {
    /// The data of the DEFLATE stream that starts at `start`, and the offset of the first byte after it.
    ///
    /// - Parameters:
    ///   - input: The bytes.
    ///   - start: Where the stream starts.
    ///   - maximumOutput: The most bytes inflated before it is refused.
    /// - Throws: ``DeflateError`` naming what is wrong.
    static func inflate(_ input: [UInt8], from start: Int = 0, maximumOutput: Int) throws(DeflateError) -> (output: [UInt8], end: Int) {
        var reader = DeflateBitReader(input, from: start)
        var output: [UInt8] = []
        var last = false
        while !last {
            last = try reader.bits(1) == 1
            switch try reader.bits(2) {
            case 0: try stored(&reader, into: &output, maximumOutput: maximumOutput)
            case 1: try codes(&reader, into: &output, literals: fixedLiterals, distances: fixedDistances, maximumOutput: maximumOutput)
            case 2:
                let (literals, distances) = try dynamicCodes(&reader)
                try codes(&reader, into: &output, literals: literals, distances: distances, maximumOutput: maximumOutput)
            default: throw DeflateError("a block has type 3, which DEFLATE does not have")
            }
        }
        return (output, reader.byteOffset)
    }

    private static func stored(_ reader: inout DeflateBitReader, into output: inout [UInt8], maximumOutput: Int) throws(DeflateError) {
        reader.alignToByte()
        let length = Int(try reader.byte()) | Int(try reader.byte()) << 8
        let complement = Int(try reader.byte()) | Int(try reader.byte()) << 8
        guard length == ~complement & 0xffff else { throw DeflateError("a stored block's length does not match its complement") }
        guard output.count + length <= maximumOutput else { throw tooLarge(maximumOutput) }
        for _ in 0..<length { output.append(try reader.byte()) }
    }

    private static func codes(
        _ reader: inout DeflateBitReader, into output: inout [UInt8], literals: DeflateHuffmanCode, distances: DeflateHuffmanCode,
        maximumOutput: Int
    ) throws(DeflateError) {
        while true {
            let symbol = try literals.decode(&reader)
            if symbol < 256 {
                guard output.count < maximumOutput else { throw tooLarge(maximumOutput) }
                output.append(UInt8(symbol))
                continue
            }
            if symbol == 256 { return }
            let lengthIndex = symbol - 257
            guard lengthIndex < lengthBases.count else { throw DeflateError("a length symbol (\(symbol)) is out of range") }
            let length = lengthBases[lengthIndex] + (try reader.bits(lengthExtraBits[lengthIndex]))
            let distanceSymbol = try distances.decode(&reader)
            guard distanceSymbol < distanceBases.count else { throw DeflateError("a distance symbol (\(distanceSymbol)) is out of range") }
            let distance = distanceBases[distanceSymbol] + (try reader.bits(distanceExtraBits[distanceSymbol]))
            guard distance <= output.count else {
                throw DeflateError("a back-reference reaches \(distance) bytes back, before the start of the data")
            }
            guard output.count + length <= maximumOutput else { throw tooLarge(maximumOutput) }
            let from = output.count - distance
            for offset in 0..<length { output.append(output[from + offset]) }
        }
    }

    private static func dynamicCodes(_ reader: inout DeflateBitReader) throws(DeflateError) -> (DeflateHuffmanCode, DeflateHuffmanCode) {
        let literalCount = try reader.bits(5) + 257
        let distanceCount = try reader.bits(5) + 1
        let lengthCodeCount = try reader.bits(4) + 4
        guard literalCount <= 286, distanceCount <= 30 else {
            throw DeflateError("a dynamic block declares \(literalCount) literal/length and \(distanceCount) distance codes (at most 286 and 30)")
        }
        var lengthCodeLengths = [Int](repeating: 0, count: 19)
        for index in 0..<lengthCodeCount { lengthCodeLengths[codeLengthOrder[index]] = try reader.bits(3) }
        let lengthCode = try DeflateHuffmanCode(lengths: lengthCodeLengths)
        guard lengthCode.shape == .complete else { throw DeflateError("a dynamic block's code-length code is incomplete") }
        var lengths: [Int] = []
        let total = literalCount + distanceCount
        while lengths.count < total {
            let symbol = try lengthCode.decode(&reader)
            if symbol < 16 {
                lengths.append(symbol)
                continue
            }
            var repeated = 0
            let count: Int
            switch symbol {
            case 16:
                guard let previous = lengths.last else { throw DeflateError("a dynamic block repeats a code length before the first one") }
                repeated = previous
                count = 3 + (try reader.bits(2))
            case 17: count = 3 + (try reader.bits(3))
            default: count = 11 + (try reader.bits(7))
            }
            guard lengths.count + count <= total else { throw DeflateError("a dynamic block's code lengths run past their table") }
            lengths.append(contentsOf: repeatElement(repeated, count: count))
        }
        guard lengths[256] != 0 else { throw DeflateError("a dynamic block has no end-of-block code") }
        let literals = try DeflateHuffmanCode(lengths: Array(lengths[0..<literalCount]))
        try requireUsable(literals, "literal/length")
        let distances = try DeflateHuffmanCode(lengths: Array(lengths[literalCount...]))
        try requireUsable(distances, "distance")
        return (literals, distances)
    }

    /// An incomplete code is refused unless it is a single code of one bit (RFC 1951 allows one distance code).
    private static func requireUsable(_ code: DeflateHuffmanCode, _ name: String) throws(DeflateError) {
        guard code.shape == .incomplete else { return }
        guard code.codeCount == code.lengthOneCount, code.codeCount <= 1 else {
            throw DeflateError("a dynamic block's \(name) code is incomplete")
        }
    }

    private static func tooLarge(_ maximum: Int) -> DeflateError {
        DeflateError("the data inflates to more than \(maximum) bytes, more than kcf reads")
    }

    private static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
    private static let lengthBases = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    private static let lengthExtraBits = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBases = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
                                        4097, 6145, 8193, 12289, 16385, 24577]
    private static let distanceExtraBits = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    /// The fixed literal/length code of RFC 1951 §3.2.6.
    private static let fixedLiterals: DeflateHuffmanCode = {
        let lengths = [Int](repeating: 8, count: 144) + [Int](repeating: 9, count: 112) + [Int](repeating: 7, count: 24) + [Int](repeating: 8, count: 8)
        return try! DeflateHuffmanCode(lengths: lengths)
    }()

    /// The fixed distance code: 30 five-bit codes (and two unused).
    private static let fixedDistances: DeflateHuffmanCode = try! DeflateHuffmanCode(lengths: [Int](repeating: 5, count: 30))
}
