#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An attribute value as ``ItemAttributes`` keeps it: dates as whole milliseconds since 1970, exactly as
/// the file stores them (SPEC.md §7.3), so that decoding and re-encoding an item is lossless for every
/// 64-bit value. Strings compare by their UTF-8 bytes.
enum StoredAttributeValue: Hashable, Sendable {
    case string(String)
    case bytes([UInt8])
    case integer(Int64)
    case boolean(Bool)
    case date(milliseconds: Int64)

    /// The value's type.
    var type: AttributeType {
        switch self {
        case .string: return .string
        case .bytes: return .bytes
        case .integer: return .integer
        case .boolean: return .boolean
        case .date: return .date
        }
    }

    /// The value as the public API shows it.
    var publicValue: AttributeValue {
        switch self {
        case .string(let text): return .string(text)
        case .bytes(let bytes): return .bytes(bytes)
        case .integer(let value): return .integer(value)
        case .boolean(let value): return .boolean(value)
        case .date(let milliseconds): return .date(milliseconds: milliseconds)
        }
    }

    /// Converts a public value; `nil` only for a date too far from 1970 for 64-bit milliseconds.
    init?(_ value: AttributeValue) {
        switch value {
        case .string(let text): self = .string(text)
        case .bytes(let bytes): self = .bytes(bytes)
        case .integer(let value): self = .integer(value)
        case .boolean(let value): self = .boolean(value)
        case .date(let date):
            guard let milliseconds = AttributeValue.milliseconds(of: date) else { return nil }
            self = .date(milliseconds: milliseconds)
        }
    }

    static func == (lhs: StoredAttributeValue, rhs: StoredAttributeValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): return a.hasSameUTF8(as: b)
        case (.bytes(let a), .bytes(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.boolean(let a), .boolean(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        default: return false
        }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(type.rawValue)
        switch self {
        case .string(let text): hasher.combine(utf8Bytes: text)
        case .bytes(let bytes): hasher.combine(bytes)
        case .integer(let value): hasher.combine(value)
        case .boolean(let value): hasher.combine(value)
        case .date(let milliseconds): hasher.combine(milliseconds)
        }
    }
}

extension String {
    /// Whether the two strings have the same UTF-8 bytes (no Unicode normalisation, unlike `==`): one
    /// memcmp when both are stored contiguously, as native Swift strings are.
    func hasSameUTF8(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        let compared = utf8.withContiguousStorageIfAvailable { left in
            other.utf8.withContiguousStorageIfAvailable { right in
                left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
        if let compared, let result = compared { return result }
        return utf8.elementsEqual(other.utf8)
    }
}
