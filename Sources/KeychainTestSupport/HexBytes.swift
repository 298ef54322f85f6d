/// Thrown when test data is not hexadecimal.
public struct HexError: Error, CustomStringConvertible {
    /// The text that is not.
    public let text: String
    public var description: String { "not hexadecimal: \(text.debugDescription)" }
}

extension Array where Element == UInt8 {
    /// Decodes hexadecimal (either case); spaces and newlines between digit pairs are ignored, so that byte
    /// strings can be laid out by field in tests and vector files.
    ///
    /// - Throws: ``HexError`` for an odd number of digits or a character that is not one.
    public init(hexString: String) throws(HexError) {
        let digits = Array(hexString.utf8).filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") }
        guard digits.count % 2 == 0 else { throw HexError(text: hexString) }
        func value(_ c: UInt8) throws(HexError) -> UInt8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: throw HexError(text: hexString)
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            bytes.append(try value(digits[index]) << 4 | value(digits[index + 1]))
            index += 2
        }
        self = bytes
    }

    /// Lowercase hexadecimal.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(count * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
