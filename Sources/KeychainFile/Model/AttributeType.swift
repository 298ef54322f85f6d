#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The type of an attribute's value, with the codes used in the file (SPEC.md §7.3).
///
/// For example:
/// ```swift
/// assert(Attribute.port.type == .integer)
/// assert(AttributeValue.string("mail").type == .string)
/// ```
public enum AttributeType: UInt8, Sendable, CustomStringConvertible {
    /// UTF-8 text of at most 65,535 bytes.
    case string = 1
    /// Raw bytes, at most 65,535 of them.
    case bytes = 2
    /// A signed 64-bit integer.
    case integer = 3
    /// `true` or `false`.
    case boolean = 4
    /// A point in time, kept to whole milliseconds.
    case date = 5

    /// The type's name as it appears in error messages, such as "string".
    public var description: String {
        switch self {
        case .string: return "string"
        case .bytes: return "bytes"
        case .integer: return "integer"
        case .boolean: return "boolean"
        case .date: return "date"
        }
    }
}
