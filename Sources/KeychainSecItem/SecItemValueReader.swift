import Foundation
import KeychainFile

/// Reads the values of SecItem dictionaries (`Any`) as attribute values, accepting the types Apple's keychain
/// accepts: strings as `String`/`NSString`; bytes as `Data`/`NSData`/`[UInt8]` or a `String` (its UTF-8
/// bytes); integers as any integer type, an integral `NSNumber` or a decimal string (`"42"`); Booleans as
/// `Bool` or the numbers 0 and 1; dates as `Date`/`NSDate`. Optionals are unwrapped; `nil` is rejected.
enum SecItemValueReader {
    /// The value inside any number of optionals, or `nil` when one of them is empty.
    static func unwrapped(_ value: Any) -> Any? {
        guard let optional = value as? any OptionalBox else { return value }
        return optional.boxedValue.flatMap(unwrapped)
    }

    /// A string value.
    static func string(_ value: Any) -> String? {
        unwrapped(value).flatMap { $0 as? String }
    }

    /// A bytes value; a string gives its UTF-8 bytes, as Apple's keychain does.
    static func bytes(_ value: Any) -> [UInt8]? {
        guard let value = unwrapped(value) else { return nil }
        if let data = value as? Data { return Array(data) }
        if let bytes = value as? [UInt8] { return bytes }
        if let text = value as? String { return Array(text.utf8) }
        return nil
    }

    /// An integer value: an integer of any width, an integral `NSNumber`, or a decimal string that reads
    /// back the same (Apple's rule for strings given to number attributes). Booleans are not integers.
    static func integer(_ value: Any) -> Int64? {
        guard let value = unwrapped(value) else { return nil }
        if let text = value as? String { return decimal(text) }
        guard type(of: value) != Bool.self, let number = value as? NSNumber else { return nil }
        return number as? Int64
    }

    /// A Boolean value: `Bool`, or the number 0 or 1.
    static func boolean(_ value: Any) -> Bool? {
        guard let value = unwrapped(value) else { return nil }
        if let flag = value as? Bool { return flag }
        guard value as? String == nil, let number = integer(value), number == 0 || number == 1 else { return nil }
        return number == 1
    }

    /// A date value.
    static func date(_ value: Any) -> Date? {
        unwrapped(value).flatMap { $0 as? Date }
    }

    /// The integer a decimal string spells, when printing it gives the string back ("42", "-1"; not "042").
    static func decimal(_ text: String) -> Int64? {
        guard let number = Int64(text), String(number) == text else { return nil }
        return number
    }

    /// Reads `value`, given under `key`, as a value of `attribute`.
    ///
    /// - Throws: errSecParam when the value does not have the attribute's type.
    static func attributeValue(_ value: Any, for attribute: Attribute, key: String) throws(SecItemFailure) -> AttributeValue {
        let read: AttributeValue?
        switch attribute {
        case .accessible:
            read = string(value).flatMap(SecItemAccessibility.code(for:)).map(AttributeValue.integer)
        case .protocolType, .authenticationType, .creator, .itemType:
            read = fourCharacterCode(value).map(AttributeValue.integer)
        default:
            switch attribute.type {
            case .string: read = string(value).map(AttributeValue.string)
            case .bytes: read = bytes(value).map(AttributeValue.bytes)
            case .integer: read = integer(value).map(AttributeValue.integer)
            case .boolean: read = boolean(value).map(AttributeValue.boolean)
            case .date: read = date(value).map(AttributeValue.date)
            }
        }
        guard let read else {
            throw .parameter("\(SecItemKeyNames.describe(key)): \(describe(value)) is not a valid \(attribute.type) value for \(attribute.name)")
        }
        return read
    }

    /// A four-character code given as a number, a decimal string, or its four characters (`"htps"`).
    static func fourCharacterCode(_ value: Any) -> Int64? {
        if let number = integer(value) { return number }
        guard let text = string(value) else { return nil }
        let bytes = Array(text.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ (0x20...0x7e).contains($0) }) else { return nil }
        return Int64(bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// A short description of a value for failure reasons (never the value of a secret).
    static func describe(_ value: Any) -> String {
        guard let value = unwrapped(value) else { return "nil" }
        return "a value of type \(type(of: value))"
    }
}

extension Optional: OptionalBox {
    var boxedValue: Any? { self.map { $0 as Any } }
}
