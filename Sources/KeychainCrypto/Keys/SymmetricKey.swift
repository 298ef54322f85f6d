/// A symmetric key: key bytes kept out of reach of accidental copies, zeroed when the last copy of the
/// key is released, and compared in constant time.
///
/// The bytes are reachable only inside ``withUnsafeBytes(_:)``. Copies of a `SymmetricKey` share one
/// buffer, which is overwritten with zeros (best effort, see `secureZero`) when the last copy goes away.
///
/// For example:
/// ```swift
/// let key = SymmetricKey(size: .bits256)            // 32 random bytes from the system generator
/// let same = SymmetricKey(data: [UInt8](repeating: 7, count: 32))
/// print(key.bitCount)                               // 256
/// ```
public struct SymmetricKey: Sendable {
    let storage: SecureBytes

    /// Creates a key of the given size from the system's cryptographically secure random generator.
    ///
    /// - Parameter size: The key size.
    public init(size: SymmetricKeySize) {
        var generator = SystemRandomNumberGenerator()
        self.init(size: size, using: &generator)
    }

    /// Creates a key of the given size with bytes drawn from `generator`.
    ///
    /// Use this only with a cryptographically secure generator; a seeded generator is for reproducible
    /// test data (fixtures), never for keys that protect anything.
    ///
    /// - Parameters:
    ///   - size: The key size.
    ///   - generator: The source of the key's bytes.
    public init<Generator: RandomNumberGenerator>(size: SymmetricKeySize, using generator: inout Generator) {
        storage = SecureBytes(count: max(0, size.bitCount / 8)) { buffer in
            buffer.fillRandom(using: &generator)
        }
    }

    /// Creates a key from the given bytes, which are copied.
    ///
    /// - Parameter data: The key bytes: an array, a slice, `Data`, or any other sequence of bytes.
    public init<Bytes: Sequence>(data: Bytes) where Bytes.Element == UInt8 {
        storage = withContiguousBytes(of: data) { source in
            SecureBytes(count: source.count) { buffer in
                if let base = source.baseAddress { buffer.baseAddress!.copyMemory(from: base, byteCount: source.count) }
            }
        }
    }

    /// Creates a key whose bytes are written by `body` into a fresh buffer of `count` bytes.
    init(count: Int, initializingWith body: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        storage = try SecureBytes(count: count, initializingWith: body)
    }

    /// The number of bits in the key.
    public var bitCount: Int { storage.count * 8 }

    /// The number of bytes in the key.
    var byteCount: Int { storage.count }

    /// Calls `body` with the key bytes. The pointer must not escape `body`.
    ///
    /// - Parameter body: A closure that reads the key bytes.
    /// - Returns: Whatever `body` returns.
    /// - Throws: Whatever `body` throws.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try storage.withUnsafeBytes(body)
    }
}

extension SymmetricKey: Equatable {
    /// Returns whether two keys hold the same bytes, in time that depends only on their lengths.
    public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool {
        lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in constantTimeEquals(l, r) } }
    }
}

extension UnsafeMutableRawBufferPointer {
    /// Fills the buffer with bytes from `generator`, eight at a time.
    func fillRandom<Generator: RandomNumberGenerator>(using generator: inout Generator) {
        var offset = 0
        while offset < count {
            var word = generator.next()
            let chunk = Swift.min(8, count - offset)
            Swift.withUnsafeBytes(of: &word) { source in
                (baseAddress! + offset).copyMemory(from: source.baseAddress!, byteCount: chunk)
            }
            word = 0
            offset += chunk
        }
    }
}
