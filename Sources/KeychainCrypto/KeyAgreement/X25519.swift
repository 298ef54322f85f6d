/// X25519 key agreement (RFC 7748 §5 and §6.1): Diffie–Hellman on Curve25519 with 32-byte keys.
///
/// A private key is 32 random bytes, held in a ``SymmetricKey`` so that it is zeroed when released; its
/// public key is 32 bytes that may be published. Two parties that exchange public keys compute the same
/// 32-byte shared secret, which is raw key material: derive keys from it with ``HKDF``, never use it as a
/// key directly. The computation takes the same time for every private key and public key (a Montgomery
/// ladder with masked swaps), and its intermediate values are overwritten before returning.
///
/// For example:
/// ```swift
/// let alice = SymmetricKey(size: .bits256)                 // 32 bytes from the system generator
/// let bob = SymmetricKey(size: .bits256)
/// let alicePublic = try X25519.publicKey(for: alice)       // sent to Bob
/// let bobPublic = try X25519.publicKey(for: bob)           // sent to Alice
/// let secret = try X25519.sharedSecret(privateKey: alice, peerPublicKey: bobPublic)
/// // == try X25519.sharedSecret(privateKey: bob, peerPublicKey: alicePublic)
/// let wrappingKey = try HKDF<SHA256>.deriveKey(inputKeyMaterial: secret, info: Array("key slot".utf8), outputByteCount: 32)
/// ```
public enum X25519 {
    /// Private keys, public keys and shared secrets are 32 bytes long.
    public static let keyByteCount = 32

    /// The u-coordinate of Curve25519's base point, 9, encoded (RFC 7748 §4.1).
    static let basePoint: [UInt8] = [9] + [UInt8](repeating: 0, count: 31)

    /// The public key of `privateKey`: X25519(privateKey, 9).
    ///
    /// Any 32 bytes make a private key: they are clamped as RFC 7748 §5 says (the low three bits and bit 255
    /// cleared, bit 254 set), so keys differing only in those bits have the same public key.
    ///
    /// - Parameter privateKey: 32 bytes, normally `SymmetricKey(size: .bits256)`.
    /// - Returns: The 32-byte public key, canonically encoded.
    /// - Throws: ``X25519Error/incorrectPrivateKeySize(byteCount:)`` unless the key is 32 bytes.
    public static func publicKey(for privateKey: SymmetricKey) throws(X25519Error) -> [UInt8] {
        // A clamped scalar is 8·m with 2^251 ≤ m < 2^252, below the base point's prime order, so the result
        // is never the all-zero point and needs no check.
        try x25519(privateKey: privateKey, uCoordinate: basePoint)
    }

    /// The shared secret of `privateKey` and a peer's public key: X25519(privateKey, peerPublicKey).
    ///
    /// The peer's key is read as RFC 7748 §5 says: its top bit is ignored, and values from 2^255 − 19 up
    /// (non-canonical encodings) and points on the curve's twist are accepted. A point of small order gives
    /// the all-zero secret whatever the private key; that is refused (RFC 7748 §6.1), because a peer who
    /// sends one learns the "secret" without knowing a private key.
    ///
    /// - Parameters:
    ///   - privateKey: Your 32-byte private key.
    ///   - peerPublicKey: The other party's 32-byte public key: an array, a slice, `Data`, or any sequence.
    /// - Returns: The 32-byte shared secret, as key material to be zeroed when released.
    /// - Throws: ``X25519Error/incorrectPrivateKeySize(byteCount:)`` or
    ///   ``X25519Error/incorrectPublicKeySize(byteCount:)`` for other lengths;
    ///   ``X25519Error/lowOrderPublicKey`` when the secret would be all zeros.
    public static func sharedSecret<PeerKey: Sequence>(
        privateKey: SymmetricKey, peerPublicKey: PeerKey
    ) throws(X25519Error) -> SymmetricKey where PeerKey.Element == UInt8 {
        try withContiguousBytes(of: peerPublicKey) { (peer) throws(X25519Error) -> SymmetricKey in
            guard peer.count == keyByteCount else { throw .incorrectPublicKeySize(byteCount: peer.count) }
            try checkSize(of: privateKey)
            let secret = SymmetricKey(count: keyByteCount) { output in
                privateKey.withUnsafeBytes { scalar in
                    MontgomeryLadder.x25519(scalar: scalar.baseAddress!, u: peer.baseAddress!, output: output.baseAddress!)
                }
            }
            // Only whether the secret is zero is branched on, and that is what the error reveals anyway.
            let isZero = secret.withUnsafeBytes { bytes in
                var accumulated: UInt8 = 0
                for byte in bytes { accumulated |= byte }
                return constantTimeIsZero(accumulated)
            }
            if isZero { throw .lowOrderPublicKey }
            return secret
        }
    }

    /// X25519 of a private key and a public u-coordinate, for public results.
    private static func x25519(privateKey: SymmetricKey, uCoordinate: [UInt8]) throws(X25519Error) -> [UInt8] {
        try checkSize(of: privateKey)
        var output = [UInt8](repeating: 0, count: keyByteCount)
        privateKey.withUnsafeBytes { scalar in
            uCoordinate.withUnsafeBytes { u in
                output.withUnsafeMutableBytes { out in
                    MontgomeryLadder.x25519(scalar: scalar.baseAddress!, u: u.baseAddress!, output: out.baseAddress!)
                }
            }
        }
        return output
    }

    private static func checkSize(of privateKey: SymmetricKey) throws(X25519Error) {
        guard privateKey.byteCount == keyByteCount else { throw .incorrectPrivateKeySize(byteCount: privateKey.byteCount) }
    }
}
