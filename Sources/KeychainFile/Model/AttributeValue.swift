#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The value of one attribute of a keychain item.
///
/// Equality is exact: strings compare by their UTF-8 bytes (so a precomposed "é" and a decomposed one are
/// different values, as they are in the file and in Apple's keychain), and dates compare by whole
/// milliseconds since 1970, the precision the file keeps. A date read back from a keychain is
/// `Date(timeIntervalSince1970: milliseconds / 1000)`.
///
/// For example:
/// ```swift
/// let values: [Attribute: AttributeValue] = [
///     .service: .string("mail"),
///     .generic: .bytes([1, 2, 3]),
///     .creator: .integer(0x6d61_696c),
///     .isInvisible: .boolean(true),
///     .creationDate: .date(milliseconds: 1_767_225_600_000),
/// ]
/// ```
public enum AttributeValue: Hashable, Sendable, CustomStringConvertible {
    /// UTF-8 text.
    case string(String)
    /// Raw bytes.
    case bytes([UInt8])
    /// A signed 64-bit integer.
    case integer(Int64)
    /// `true` or `false`.
    case boolean(Bool)
    /// A point in time; only whole milliseconds are kept.
    case date(Date)

    /// Returns a date value from milliseconds since 1970-01-01T00:00:00Z, the form the file stores.
    ///
    /// For example:
    /// ```swift
    /// let value = AttributeValue.date(milliseconds: 1_500)  // 1970-01-01T00:00:01.500Z
    /// assert(value.millisecondsSince1970 == 1_500)
    /// ```
    ///
    /// - Parameter milliseconds: Milliseconds since the Unix epoch; negative values are before it.
    /// - Returns: `.date` of that instant.
    public static func date(milliseconds: Int64) -> AttributeValue {
        .date(AttributeValue.date(fromMilliseconds: milliseconds))
    }

    /// The type of the value.
    public var type: AttributeType {
        switch self {
        case .string: return .string
        case .bytes: return .bytes
        case .integer: return .integer
        case .boolean: return .boolean
        case .date: return .date
        }
    }

    /// For a date, its milliseconds since 1970-01-01T00:00:00Z, rounded to the nearest millisecond; `nil`
    /// for other values and for dates too far from 1970 for 64 bits of milliseconds.
    public var millisecondsSince1970: Int64? {
        guard case .date(let date) = self else { return nil }
        return AttributeValue.milliseconds(of: date)
    }

    /// The milliseconds of `date` since 1970, rounded to the nearest, or `nil` when they do not fit in an
    /// `Int64` (or the date is not finite).
    static func milliseconds(of date: Date) -> Int64? {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return nil }
        return Int64(exactly: value)
    }

    /// The `Date` of `milliseconds` since 1970.
    static func date(fromMilliseconds milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }

    /// Returns whether two values are the same: strings byte for byte in UTF-8, dates to the millisecond.
    public static func == (lhs: AttributeValue, rhs: AttributeValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): return a.utf8.elementsEqual(b.utf8)
        case (.bytes(let a), .bytes(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.boolean(let a), .boolean(let b)): return a == b
        case (.date(let a), .date(let b)):
            let (ma, mb) = (milliseconds(of: a), milliseconds(of: b))
            if ma == nil && mb == nil { return a == b }
            return ma == mb
        default: return false
        }
    }

    /// Hashes the value consistently with `==`: strings by their UTF-8 bytes, dates by their milliseconds.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(type.rawValue)
        switch self {
        case .string(let text): hasher.combine(utf8Bytes: text)
        case .bytes(let bytes): hasher.combine(bytes)
        case .integer(let value): hasher.combine(value)
        case .boolean(let value): hasher.combine(value)
        case .date(let date):
            if let milliseconds = AttributeValue.milliseconds(of: date) {
                hasher.combine(milliseconds)
            } else {
                hasher.combine(date)
            }
        }
    }

    /// A short rendering for messages and debugging: strings quoted, bytes in hex, dates in milliseconds.
    public var description: String {
        switch self {
        case .string(let text): return "\"\(text)\""
        case .bytes(let bytes): return "0x" + bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        case .integer(let value): return String(value)
        case .boolean(let value): return String(value)
        case .date(let date):
            return AttributeValue.milliseconds(of: date).map { "\($0) ms since 1970" } ?? "\(date)"
        }
    }
}

extension Hasher {
    /// Feeds the UTF-8 bytes of `text`, and their count, to the hasher: the hash that goes with byte-exact
    /// string equality.
    mutating func combine(utf8Bytes text: String) {
        var copy = text
        copy.withUTF8 { combine(bytes: UnsafeRawBufferPointer($0)) }
        combine(text.utf8.count)
    }
}

extension String {
    /// The string with "0" added in front until it is `width` characters long.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
