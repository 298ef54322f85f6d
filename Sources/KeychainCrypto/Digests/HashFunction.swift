/// A cryptographic hash function: create it, feed it bytes with `update`, read the digest with
/// `finalize`.
///
/// The requirements and names follow CryptoKit's `HashFunction`. ``SHA256`` is the implementation in this
/// module.
///
/// For example:
/// ```swift
/// var hasher = SHA256()
/// hasher.update(data: Array("hello ".utf8))
/// hasher.update(data: Array("world".utf8))
/// let digest = hasher.finalize()
/// ```
public protocol HashFunction: Sendable {
    /// The digest type the function produces.
    associatedtype Digest: KeychainCrypto.Digest

    /// The number of bytes the function consumes per compression (its block size).
    static var blockByteCount: Int { get }

    /// Creates a hash function in its initial state.
    init()

    /// Adds the bytes in `bufferPointer` to the data being hashed.
    ///
    /// - Parameter bufferPointer: The bytes to add.
    mutating func update(bufferPointer: UnsafeRawBufferPointer)

    /// Returns the digest of all the data added so far. The function itself is left unchanged, so more
    /// data can be added and a later digest taken.
    func finalize() -> Digest
}

extension HashFunction {
    /// Adds `data` to the data being hashed.
    ///
    /// - Parameter data: The bytes to add: an array, a slice, `Data`, or any other sequence of bytes.
    ///   Contiguous storage is hashed in place, without a copy.
    @inlinable
    public mutating func update<Bytes: Sequence>(data: Bytes) where Bytes.Element == UInt8 {
        withContiguousBytes(of: data) { self.update(bufferPointer: $0) }
    }

    /// Returns the digest of `data`.
    ///
    /// For example:
    /// ```swift
    /// let digest = SHA256.hash(data: Array("abc".utf8))
    /// ```
    ///
    /// - Parameter data: The bytes to hash.
    /// - Returns: The digest.
    @inlinable
    public static func hash<Bytes: Sequence>(data: Bytes) -> Digest where Bytes.Element == UInt8 {
        var hasher = Self()
        hasher.update(data: data)
        return hasher.finalize()
    }
}

/// Lowercase hexadecimal of `bytes`.
func hexEncoded(_ bytes: UnsafeRawBufferPointer) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var characters = [UInt8]()
    characters.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        characters.append(digits[Int(byte >> 4)])
        characters.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: characters, as: UTF8.self)
}
