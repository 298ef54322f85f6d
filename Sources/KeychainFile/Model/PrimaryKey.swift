#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The primary key of a keychain item (SPEC.md §8.3): its class, the values of its class's primary-key
/// attributes (§8.1), its accessGroup and its synchronizable flag, with absent attributes taken as their
/// defaults.
///
/// Two live items of one class may not share a primary key. The key is kept as one canonical byte string
/// (the class code, then each key attribute encoded as in SPEC.md §7.3, in tag order), so keys that are
/// equal hash equal and strings compare byte for byte.
///
/// For example:
/// ```swift
/// let mail = try GenericPassword(service: "mail", account: "ann").attributes
/// let again = try GenericPassword(service: "mail", account: "ann", label: "Mail").attributes
/// assert(mail.primaryKey == again.primaryKey)
/// ```
public struct PrimaryKey: Hashable, Sendable, CustomStringConvertible {
    /// The class of the items the key belongs to.
    public let itemClass: ItemClass
    /// The canonical encoding: class code, then the key attributes as `tag ‖ type ‖ length ‖ value`.
    let encoded: [UInt8]

    init(itemClass: ItemClass, encoded: [UInt8]) {
        self.itemClass = itemClass
        self.encoded = encoded
    }

    /// Hashes the encoding as one block of bytes (the class is its first byte): the synthesised hash would
    /// feed the hasher one byte at a time, which dominated opening a large keychain.
    public func hash(into hasher: inout Hasher) {
        encoded.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    public static func == (lhs: PrimaryKey, rhs: PrimaryKey) -> Bool {
        lhs.itemClass == rhs.itemClass && lhs.encoded.elementsEqualBytes(rhs.encoded)
    }

    /// The class and the canonical encoding in hexadecimal, for messages and debugging.
    public var description: String {
        "PrimaryKey(\(itemClass), " + encoded.map { byte in
            let digits = String(byte, radix: 16)
            return byte < 0x10 ? "0" + digits : digits
        }.joined() + ")"
    }
}

extension Array where Element == UInt8 {
    /// Byte equality with one `memcmp`-style comparison of the two buffers.
    func elementsEqualBytes(_ other: [UInt8]) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBytes { left in
            other.withUnsafeBytes { right in
                left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
    }
}
