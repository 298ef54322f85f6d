/// BLAKE2b (RFC 7693): a hash of 1 to 64 bytes, keyed (a MAC) or not, of any amount of data.
///
/// Unlike ``SHA256``, the digest length is chosen per hasher, so `BLAKE2b` does not conform to
/// ``HashFunction`` (whose digests have one length per type); ``BLAKE2b512`` is the conforming fixed-length
/// variant. Different output lengths give unrelated digests, not truncations of one another: the length is
/// part of the parameter block (RFC 7693 §2.5).
///
/// Hash in one call with ``hash(data:outputByteCount:)``, or incrementally with ``update(data:)`` and
/// ``finalize()``; both give the same digest however the bytes are split. The value is a plain struct, so a
/// partly fed hasher can be copied and each copy continued separately. A keyed hasher keeps the padded key
/// in its buffer until more data arrives; it is a value type, so that copy is not zeroed when it goes away.
///
/// For example:
/// ```swift
/// let digest = try BLAKE2b.hash(data: Array("abc".utf8))             // 64 bytes, BLAKE2b-512
/// print(digest.hexString)  // ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1…
///
/// var mac = try BLAKE2b(outputByteCount: 32, key: SymmetricKey(size: .bits256))
/// mac.update(data: Array("message".utf8))
/// let tag = mac.finalize()                                            // compare tags with ==
/// ```
public struct BLAKE2b: Sendable {
    /// BLAKE2b consumes 128-byte blocks.
    public static let blockByteCount = 128
    /// The longest digest, in bytes.
    public static let maximumOutputByteCount = 64
    /// The longest key, in bytes.
    public static let maximumKeyByteCount = 64

    /// The length of the digest this hasher produces, 1 to 64 bytes.
    public let outputByteCount: Int

    /// The chaining value and byte counter after the blocks compressed so far.
    var state: BLAKE2bState
    /// Bytes not yet compressed: the first `pendingCount` bytes are meaningful. A full block stays here
    /// until more data arrives, because only the last block is compressed with the final flag.
    private var pending: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                          UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    private var pendingCount = 0

    /// Creates an unkeyed hasher.
    ///
    /// - Parameter outputByteCount: The digest length, 1 to 64 bytes; 64 (BLAKE2b-512) if omitted.
    /// - Throws: ``CryptoKitError/incorrectParameterSize`` if `outputByteCount` is out of range.
    public init(outputByteCount: Int = 64) throws(CryptoKitError) {
        guard outputByteCount >= 1, outputByteCount <= Self.maximumOutputByteCount else {
            throw .incorrectParameterSize
        }
        self.init(uncheckedOutputByteCount: outputByteCount)
    }

    /// Creates a keyed hasher: BLAKE2b as a message authentication code (RFC 7693 §3.3, the key padded to
    /// a block and hashed first). An empty key gives the unkeyed hash.
    ///
    /// - Parameters:
    ///   - outputByteCount: The digest length, 1 to 64 bytes; 64 if omitted.
    ///   - key: The key, 0 to 64 bytes.
    /// - Throws: ``CryptoKitError/incorrectParameterSize`` if `outputByteCount` is out of range;
    ///   ``CryptoKitError/incorrectKeySize`` if the key is longer than 64 bytes.
    public init(outputByteCount: Int = 64, key: SymmetricKey) throws(CryptoKitError) {
        guard outputByteCount >= 1, outputByteCount <= Self.maximumOutputByteCount else {
            throw .incorrectParameterSize
        }
        guard key.byteCount <= Self.maximumKeyByteCount else { throw .incorrectKeySize }
        self.outputByteCount = outputByteCount
        state = BLAKE2bState(outputByteCount: outputByteCount, keyByteCount: key.byteCount)
        guard key.byteCount > 0 else { return }
        key.withUnsafeBytes { keyBytes in
            Swift.withUnsafeMutableBytes(of: &pending) { $0.baseAddress!.copyMemory(from: keyBytes.baseAddress!, byteCount: keyBytes.count) }
        }
        pendingCount = Self.blockByteCount
    }

    /// An unkeyed hasher whose length the caller has checked (Argon2's H and H').
    ///
    /// - Precondition: `1 ≤ outputByteCount ≤ 64`.
    init(uncheckedOutputByteCount outputByteCount: Int) {
        self.outputByteCount = outputByteCount
        state = BLAKE2bState(outputByteCount: outputByteCount, keyByteCount: 0)
    }

    /// Adds `data` to the data being hashed.
    ///
    /// - Parameter data: The bytes to add: an array, a slice, `Data`, or any other sequence of bytes.
    @inlinable
    public mutating func update<Bytes: Sequence>(data: Bytes) where Bytes.Element == UInt8 {
        withContiguousBytes(of: data) { self.update(bufferPointer: $0) }
    }

    /// Adds the bytes in `bufferPointer` to the data being hashed.
    ///
    /// - Parameter bufferPointer: The bytes to add.
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        guard var input = bufferPointer.baseAddress, bufferPointer.count > 0 else { return }
        var remaining = bufferPointer.count
        let blockSize = Self.blockByteCount

        if pendingCount > 0 || remaining <= blockSize {
            let taken = min(blockSize - pendingCount, remaining)
            let offset = pendingCount
            Swift.withUnsafeMutableBytes(of: &pending) { buffer in (buffer.baseAddress! + offset).copyMemory(from: input, byteCount: taken) }
            pendingCount += taken
            input += taken
            remaining -= taken
            guard remaining > 0 else { return }
            // More data follows, so the full pending block is not the last one.
            state.advance(by: blockSize)
            Swift.withUnsafeBytes(of: &pending) { state.compress(block: $0.baseAddress!, isLast: false) }
            pendingCount = 0
        }

        // Whole blocks straight from the input, keeping back at least one byte for the final block.
        while remaining > blockSize {
            state.advance(by: blockSize)
            state.compress(block: input, isLast: false)
            input += blockSize
            remaining -= blockSize
        }

        let tail = input
        Swift.withUnsafeMutableBytes(of: &pending) { $0.baseAddress!.copyMemory(from: tail, byteCount: remaining) }
        pendingCount = remaining
    }

    /// Returns the digest of the data added so far; the hasher itself is unchanged.
    public func finalize() -> BLAKE2bDigest {
        BLAKE2bDigest(byteCount: outputByteCount) { finalize(into: $0) }
    }

    /// Writes the digest of the data added so far to `output`; the hasher itself is unchanged.
    ///
    /// - Precondition: `output` points at `outputByteCount` writable bytes.
    func finalize(into output: UnsafeMutableRawPointer) {
        var state = self.state
        var last = pending
        let count = pendingCount
        state.advance(by: count)
        Swift.withUnsafeMutableBytes(of: &last) { block in
            (block.baseAddress! + count).initializeMemory(as: UInt8.self, repeating: 0, count: Self.blockByteCount - count)
            state.compress(block: UnsafeRawPointer(block.baseAddress!), isLast: true)
        }
        state.store(into: output, count: outputByteCount)
    }

    /// Returns the unkeyed BLAKE2b digest of `data`.
    ///
    /// For example:
    /// ```swift
    /// let digest = try BLAKE2b.hash(data: Array("abc".utf8), outputByteCount: 32)   // BLAKE2b-256
    /// ```
    ///
    /// - Parameters:
    ///   - data: The bytes to hash.
    ///   - outputByteCount: The digest length, 1 to 64 bytes; 64 if omitted.
    /// - Returns: The digest.
    /// - Throws: ``CryptoKitError/incorrectParameterSize`` if `outputByteCount` is out of range.
    @inlinable
    public static func hash<Bytes: Sequence>(
        data: Bytes, outputByteCount: Int = 64
    ) throws(CryptoKitError) -> BLAKE2bDigest where Bytes.Element == UInt8 {
        var hasher = try BLAKE2b(outputByteCount: outputByteCount)
        hasher.update(data: data)
        return hasher.finalize()
    }

    /// Returns the keyed BLAKE2b digest (MAC) of `data`.
    ///
    /// - Parameters:
    ///   - data: The bytes to authenticate.
    ///   - key: The key, 0 to 64 bytes.
    ///   - outputByteCount: The digest length, 1 to 64 bytes; 64 if omitted.
    /// - Returns: The digest; compare it with `==`, which takes the same time wherever digests differ.
    /// - Throws: ``CryptoKitError/incorrectParameterSize`` if `outputByteCount` is out of range;
    ///   ``CryptoKitError/incorrectKeySize`` if the key is longer than 64 bytes.
    @inlinable
    public static func hash<Bytes: Sequence>(
        data: Bytes, key: SymmetricKey, outputByteCount: Int = 64
    ) throws(CryptoKitError) -> BLAKE2bDigest where Bytes.Element == UInt8 {
        var hasher = try BLAKE2b(outputByteCount: outputByteCount, key: key)
        hasher.update(data: data)
        return hasher.finalize()
    }
}
