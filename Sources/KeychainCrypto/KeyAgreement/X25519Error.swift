/// Errors thrown by ``X25519``.
public enum X25519Error: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Thrown when a private key is not 32 bytes long; `byteCount` is the length given.
    case incorrectPrivateKeySize(byteCount: Int)
    /// Thrown when a peer's public key is not 32 bytes long; `byteCount` is the length given.
    case incorrectPublicKeySize(byteCount: Int)
    /// Thrown when the shared secret would be all zeros (RFC 7748 §6.1's check): the peer's public key is a
    /// point of small order, which gives the same result for every private key, so it agrees on no secret.
    case lowOrderPublicKey

    public var description: String {
        switch self {
        case .incorrectPrivateKeySize(let byteCount):
            return "an X25519 private key is 32 bytes, but this one is \(byteCount) bytes"
        case .incorrectPublicKeySize(let byteCount):
            return "an X25519 public key is 32 bytes, but the peer's key is \(byteCount) bytes"
        case .lowOrderPublicKey:
            return "the peer's X25519 public key is a point of small order, which gives an all-zero shared secret: refused"
        }
    }
}
