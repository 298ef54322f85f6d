/// The identity of one keychain item: 16 random bytes, fixed when the item is added and kept by every
/// update, so that records about the same item can be matched (SPEC.md §7.3).
///
/// An item ID is not secret, but it is stored only inside sealed boxes. It prints as 32 lowercase
/// hexadecimal digits.
///
/// For example:
/// ```swift
/// var generator = SystemRandomNumberGenerator()
/// let id = ItemID(using: &generator)
/// let same = try ItemID(bytes: id.bytes)
/// assert(same == id)
/// print(id)  // e.g. 3f0c9a4e1b7d25c8a0e6f4b2d9c17e53
/// ```
public struct ItemID: Hashable, Sendable, CustomStringConvertible {
    /// The number of bytes in an item ID.
    public static let byteCount = 16

    /// The first eight bytes, big-endian.
    let high: UInt64
    /// The last eight bytes, big-endian.
    let low: UInt64

    /// Creates an item ID from its two big-endian halves.
    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Creates an item ID from exactly 16 bytes.
    ///
    /// For example:
    /// ```swift
    /// let id = try ItemID(bytes: [UInt8](repeating: 0xab, count: 16))
    /// ```
    ///
    /// - Parameter bytes: The 16 bytes of the ID, in order.
    /// - Throws: `KeychainError.invalidParameter` when `bytes` does not hold exactly 16 bytes.
    public init(bytes: some Sequence<UInt8>) throws(KeychainError) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var count = 0
        for byte in bytes {
            guard count < Self.byteCount else {
                throw .invalidParameter("item id: more than \(Self.byteCount) bytes")
            }
            if count < 8 {
                high = high << 8 | UInt64(byte)
            } else {
                low = low << 8 | UInt64(byte)
            }
            count += 1
        }
        guard count == Self.byteCount else {
            throw .invalidParameter("item id: \(count) bytes, expected \(Self.byteCount)")
        }
        self.init(high: high, low: low)
    }

    /// Creates a random item ID.
    ///
    /// Use `SystemRandomNumberGenerator` for real items; a seeded generator is only for reproducible test
    /// fixtures.
    ///
    /// For example:
    /// ```swift
    /// var generator = SystemRandomNumberGenerator()
    /// let id = ItemID(using: &generator)
    /// ```
    ///
    /// - Parameter generator: The source of the 16 random bytes.
    public init<G: RandomNumberGenerator>(using generator: inout G) {
        self.init(high: generator.next(), low: generator.next())
    }

    /// Creates an item ID from the 16 bytes at the start of `buffer`, which the caller has checked holds
    /// at least 16 bytes.
    init(uncheckedPrefixOf buffer: UnsafeRawBufferPointer) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<8 {
            high = high << 8 | UInt64(buffer[index])
            low = low << 8 | UInt64(buffer[index &+ 8])
        }
        self.init(high: high, low: low)
    }

    /// The 16 bytes of the ID, in order.
    public var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// Calls `body` with the 16 bytes of the ID.
    ///
    /// For example:
    /// ```swift
    /// let first = id.withUnsafeBytes { $0[0] }
    /// ```
    ///
    /// - Parameter body: A closure that reads the bytes; the pointer must not escape it.
    /// - Returns: Whatever `body` returns.
    /// - Throws: Whatever `body` throws.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var storage = (high.bigEndian, low.bigEndian)
        return try Swift.withUnsafeBytes(of: &storage, body)
    }

    /// Creates an item ID from the 32 hexadecimal digits ``description`` prints (either case).
    ///
    /// For example:
    /// ```swift
    /// let id = try ItemID(hexadecimal: "3f0c9a4e1b7d25c8a0e6f4b2d9c17e53")
    /// ```
    ///
    /// - Parameter hexadecimal: Exactly 32 hexadecimal digits.
    /// - Throws: `KeychainError.invalidParameter` for anything else.
    public init(hexadecimal: String) throws(KeychainError) {
        let digits = Array(hexadecimal.utf8)
        guard digits.count == 2 * Self.byteCount else {
            throw .invalidParameter("item id: \(digits.count) characters, expected \(2 * Self.byteCount) hexadecimal digits")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.byteCount)
        var index = 0
        while index < digits.count {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else {
                throw .invalidParameter("item id: not hexadecimal")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        try self.init(bytes: bytes)
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The ID as 32 lowercase hexadecimal digits.
    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var characters = [UInt8]()
        characters.reserveCapacity(2 * Self.byteCount)
        withUnsafeBytes { raw in
            for byte in raw {
                characters.append(digits[Int(byte >> 4)])
                characters.append(digits[Int(byte & 0x0f)])
            }
        }
        return String(decoding: characters, as: UTF8.self)
    }
}
