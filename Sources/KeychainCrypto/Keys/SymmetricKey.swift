/// The size of a symmetric key, in bits.
///
/// For example:
/// ```swift
/// let key = SymmetricKey(size: .bits256)
/// ```
public struct SymmetricKeySize: Sendable, Hashable {
    /// The number of bits in the key.
    public let bitCount: Int

    /// A size of 128 bits.
    public static var bits128: SymmetricKeySize { SymmetricKeySize(bitCount: 128) }
    /// A size of 192 bits.
    public static var bits192: SymmetricKeySize { SymmetricKeySize(bitCount: 192) }
    /// A size of 256 bits.
    public static var bits256: SymmetricKeySize { SymmetricKeySize(bitCount: 256) }

    /// Creates a size of `bitCount` bits.
    ///
    /// As in CryptoKit, a key of this size has `bitCount / 8` bytes (rounded down); a negative count
    /// gives an empty key. Algorithms refuse keys of sizes they do not support with a typed error.
    ///
    /// - Parameter bitCount: The number of bits, normally a multiple of 8.
    public init(bitCount: Int) {
        self.bitCount = bitCount
    }
}

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

/// Heap storage for secret bytes: written once when created, read-only afterwards, zeroed on deinit.
///
/// It also caches the expanded AES-GCM key derived from the bytes, so that sealing many messages with one
/// `SymmetricKey` expands it once; the cache is released (and zeroes itself) with the storage.
///
/// `@unchecked Sendable` is sound because the buffer is fully written inside `init` and never mutated
/// afterwards (only read through `withUnsafeBytes`), the cache is only read and written under `cacheLock`,
/// and `deinit` runs once no thread holds a reference.
final class SecureBytes: @unchecked Sendable {
    private let buffer: UnsafeMutableRawBufferPointer
    private let cacheLock = Lock()
    private var gcmContextCache: AESGCMContext?

    /// The number of bytes held.
    var count: Int { buffer.count }

    /// Allocates `count` bytes, zero-filled, then lets `body` write them.
    init(count: Int, initializingWith body: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        // A zero-byte key still gets a distinct 1-byte allocation, so `baseAddress` is never nil.
        let allocation = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        allocation.initializeMemory(as: UInt8.self, repeating: 0)
        buffer = UnsafeMutableRawBufferPointer(rebasing: allocation[0..<count])
        do {
            try body(buffer)
        } catch {
            secureZero(allocation.baseAddress!, count: allocation.count)
            allocation.deallocate()
            throw error
        }
    }

    deinit {
        secureZero(buffer.baseAddress!, count: max(buffer.count, 1))
        buffer.baseAddress!.deallocate()
    }

    func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(buffer))
    }

    /// The AES-GCM context for these bytes, expanded on first use and kept for later calls.
    ///
    /// - Throws: `CryptoKitError.incorrectKeySize` unless the key is 16, 24 or 32 bytes.
    func gcmContext() throws(CryptoKitError) -> AESGCMContext {
        let cached: AESGCMContext? = cacheLock.withLock { gcmContextCache }
        if let cached { return cached }
        let context = try AESGCMContext(key: UnsafeRawBufferPointer(buffer))
        // Two threads may both expand the key; they produce equal contexts and the first one stored wins.
        return cacheLock.withLock {
            if let existing = gcmContextCache { return existing }
            gcmContextCache = context
            return context
        }
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
