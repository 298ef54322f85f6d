import Foundation
import KeychainFile

/// Values written the way `security` writes them.
enum SecurityText {
    /// Bytes as `security` prints a blob: `"text"` when every byte is printable ASCII, else
    /// `0xHEX  "escaped"` with other bytes as octal escapes (`\303\274`).
    static func blob(_ bytes: [UInt8]) -> String {
        if bytes.allSatisfy({ (0x20...0x7E).contains($0) }) { return quoted(bytes) }
        return "0x" + Hex.upper(bytes) + "  " + quoted(bytes)
    }

    /// `bytes` in double quotes; `"` and `\` escaped with a backslash, unprintable bytes as `\ooo`.
    static func quoted(_ bytes: [UInt8]) -> String {
        var text = "\""
        for byte in bytes {
            switch byte {
            case 0x22: text += "\\\""
            case 0x5C: text += "\\\\"
            case 0x20...0x7E: text += String(UnicodeScalar(byte))
            default:
                let octal = String(byte, radix: 8)
                text += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            }
        }
        return text + "\""
    }

    /// A 32-bit code as four characters when they are printable, else `0x%08X`.
    static func uint32(_ value: Int64) -> String {
        if let text = fourCharacters(value) { return quoted(Array(text.utf8)) }
        let hex = String(UInt32(truncatingIfNeeded: value), radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// The four characters of a 32-bit code when they are all printable ASCII, else `nil`.
    static func fourCharacters(_ value: Int64) -> String? {
        guard let bits = UInt32(exactly: value) else { return nil }
        let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: bits >> UInt32($0)) }
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A date as `security` prints a timedate: the hex of `YYYYMMDDhhmmssZ\0`, then the text.
    static func timedate(_ date: Date) -> String {
        let bytes = Array(compactUTC(date).utf8) + [0]
        return "0x" + Hex.upper(bytes) + "  " + quoted(bytes)
    }

    /// `YYYYMMDDhhmmssZ` in UTC.
    static func compactUTC(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss'Z'"
        return formatter.string(from: date)
    }

    /// One attribute value in `security`'s form for `attribute`.
    static func value(_ value: AttributeValue, of attribute: Attribute) -> String {
        switch value {
        case .string(let text): return blob(Array(text.utf8))
        case .bytes(let bytes): return blob(bytes)
        case .integer(let number):
            return AttributeCodes.kind(of: attribute) == .uint32 ? uint32(number) : String(number)
        case .boolean(let flag): return flag ? "1" : "0"
        case .date(let date): return timedate(date)
        }
    }
}
