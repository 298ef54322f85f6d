/// Four-character codes (Apple's `FourCharCode`): four ASCII characters read as one big-endian `UInt32`,
/// so `"htps"` is 0x68747073 (SPEC.md §8.2).
enum FourCharacterCode {
    /// The value of a code known when the program is written, such as `"htps"`.
    ///
    /// Static strings in this module are exactly four ASCII characters; the shifts cannot trap for any
    /// string (bits shifted out are discarded).
    static func value(_ code: StaticString) -> UInt32 {
        code.withUTF8Buffer { $0.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
    }

    /// The value of `code`.
    ///
    /// - Throws: `KeychainError.invalidParameter` unless `code` is exactly four printable ASCII characters
    ///   (0x20 … 0x7E).
    static func value(of code: String, what: String) throws(KeychainError) -> UInt32 {
        let bytes = Array(code.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ (0x20...0x7e).contains($0) }) else {
            throw .invalidParameter("\(what): \"\(code)\" is not four printable ASCII characters")
        }
        return bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// The four characters of `value` when they are all printable ASCII, otherwise its hexadecimal form.
    static func string(of value: UInt32) -> String {
        let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
        if bytes.allSatisfy({ (0x20...0x7e).contains($0) }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        return "0x" + String(value, radix: 16)
    }
}
