/// HMAC (RFC 2104) over a hash function: a keyed authentication code.
///
/// Creating an `HMAC` absorbs the padded key into the inner and outer hash states once; the value can then
/// be copied and reused for any number of messages at the cost of hashing only the messages themselves
/// (plus one block for the outer hash).
///
/// For example:
/// ```swift
/// let key = SymmetricKey(size: .bits256)
/// let tag = HMAC<SHA256>.authenticationCode(for: Array("message".utf8), using: key)
/// let ok = HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: Array("message".utf8), using: key)
///
/// // Precompute the keyed state once, then reuse it:
/// let keyed = HMAC<SHA256>(key: key)
/// var mac = keyed
/// mac.update(data: Array("part one, ".utf8))
/// mac.update(data: Array("part two".utf8))
/// let streamed = mac.finalize()
/// ```
public struct HMAC<H: HashFunction>: Sendable {
    /// The key type: a ``SymmetricKey`` of any length.
    public typealias Key = SymmetricKey
    /// The authentication code type.
    public typealias MAC = HashedAuthenticationCode<H>

    var innerHasher: H
    var outerHasher: H

    /// Creates an authenticator keyed with `key`, of any length (longer than the hash's block size, it is
    /// hashed first, as RFC 2104 requires).
    ///
    /// - Parameter key: The secret key.
    public init(key: SymmetricKey) {
        let blockSize = H.blockByteCount
        var inner = H()
        var outer = H()
        key.withUnsafeBytes { keyBytes in
            withUnsafeTemporaryAllocation(byteCount: blockSize * 2, alignment: 8) { pads in
                let innerPad = UnsafeMutableRawBufferPointer(rebasing: pads[0..<blockSize])
                let outerPad = UnsafeMutableRawBufferPointer(rebasing: pads[blockSize...])
                innerPad.initializeMemory(as: UInt8.self, repeating: 0)
                if keyBytes.count > blockSize {
                    var hasher = H()
                    hasher.update(bufferPointer: keyBytes)
                    hasher.finalize().withUnsafeBytes { innerPad.copyMemory(from: $0) }
                } else if keyBytes.count > 0 {
                    innerPad.copyMemory(from: keyBytes)
                }
                for index in 0..<blockSize {
                    let keyByte = innerPad[index]
                    innerPad[index] = keyByte ^ 0x36
                    outerPad[index] = keyByte ^ 0x5c
                }
                inner.update(bufferPointer: UnsafeRawBufferPointer(innerPad))
                outer.update(bufferPointer: UnsafeRawBufferPointer(outerPad))
                secureZero(pads.baseAddress!, count: pads.count)
            }
        }
        innerHasher = inner
        outerHasher = outer
    }

    /// Adds `data` to the message being authenticated.
    ///
    /// - Parameter data: The bytes to add: an array, a slice, `Data`, or any other sequence of bytes.
    @inlinable
    public mutating func update<Bytes: Sequence>(data: Bytes) where Bytes.Element == UInt8 {
        withContiguousBytes(of: data) { self.update(bufferPointer: $0) }
    }

    /// Adds the bytes in `bufferPointer` to the message being authenticated.
    ///
    /// - Parameter bufferPointer: The bytes to add.
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        innerHasher.update(bufferPointer: bufferPointer)
    }

    /// Returns the authentication code of the message added so far; the authenticator is unchanged.
    public func finalize() -> MAC {
        var outer = outerHasher
        innerHasher.finalize().withUnsafeBytes { outer.update(bufferPointer: $0) }
        return HashedAuthenticationCode(digest: outer.finalize())
    }

    /// Returns the authentication code of `data` under `key`.
    ///
    /// - Parameters:
    ///   - data: The message.
    ///   - key: The secret key.
    /// - Returns: The authentication code.
    @inlinable
    public static func authenticationCode<Bytes: Sequence>(
        for data: Bytes, using key: SymmetricKey
    ) -> MAC where Bytes.Element == UInt8 {
        var authenticator = Self(key: key)
        authenticator.update(data: data)
        return authenticator.finalize()
    }

    /// Returns whether `authenticationCode` is the code of `authenticatedData` under `key`, comparing in
    /// constant time.
    ///
    /// - Parameters:
    ///   - authenticationCode: The code to check.
    ///   - authenticatedData: The message.
    ///   - key: The secret key.
    /// - Returns: `true` if the code verifies.
    @inlinable
    public static func isValidAuthenticationCode<Bytes: Sequence>(
        _ authenticationCode: MAC, authenticating authenticatedData: Bytes, using key: SymmetricKey
    ) -> Bool where Bytes.Element == UInt8 {
        self.authenticationCode(for: authenticatedData, using: key) == authenticationCode
    }

    /// Returns whether the bytes `authenticationCode` are the code of `authenticatedData` under `key`,
    /// comparing in constant time. A code of the wrong length is invalid.
    ///
    /// - Parameters:
    ///   - authenticationCode: The code to check, as bytes.
    ///   - authenticatedData: The message.
    ///   - key: The secret key.
    /// - Returns: `true` if the code verifies.
    @inlinable
    public static func isValidAuthenticationCode<Code: Sequence, Bytes: Sequence>(
        _ authenticationCode: Code, authenticating authenticatedData: Bytes, using key: SymmetricKey
    ) -> Bool where Code.Element == UInt8, Bytes.Element == UInt8 {
        self.authenticationCode(for: authenticatedData, using: key) == authenticationCode
    }
}
