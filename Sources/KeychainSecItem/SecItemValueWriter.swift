import Foundation
import KeychainFile

/// Turns stored attribute values into the Foundation values Apple's keychain returns: `String`, `Data`,
/// `Int`, `Bool` and `Date`; `kSecAttrAccessible` as its `kSecAttrAccessible…` string, and the protocol and
/// authentication type as their four characters (`"htps"`), as Apple returns the string constants it was given.
enum SecItemValueWriter {
    /// The Foundation value of `value`, an attribute value of `attribute`.
    static func object(for value: AttributeValue, of attribute: Attribute) -> Any {
        switch (attribute, value) {
        case (.accessible, .integer(let code)):
            return SecItemAccessibility.string(for: code) ?? Int(code)
        case (.protocolType, .integer(let code)), (.authenticationType, .integer(let code)):
            return fourCharacters(code) ?? Int(code)
        default:
            break
        }
        switch value {
        case .string(let text): return text
        case .bytes(let bytes): return Data(bytes)
        case .integer(let number): return Int(number)
        case .boolean(let flag): return flag
        case .date(let date): return date
        }
    }

    /// The four printable characters of a non-zero code, or `nil`.
    static func fourCharacters(_ code: Int64) -> String? {
        guard code > 0, let value = UInt32(exactly: code) else { return nil }
        let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
        guard bytes.allSatisfy({ (0x20...0x7e).contains($0) }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The attributes of an item as a SecItem dictionary: each attribute under its Apple key.
    static func dictionary(of attributes: ItemAttributes) -> [String: Any] {
        var result: [String: Any] = [:]
        for (attribute, value) in attributes {
            result[SecItemAttributeKeys.key(for: attribute)] = object(for: value, of: attribute)
        }
        return result
    }
}
