/// Errors thrown by the cryptographic operations of this module.
///
/// The type and its cases carry CryptoKit's names, so that code catching `CryptoKitError` compiles
/// unchanged against either library.
public enum CryptoKitError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Thrown when a key has a size the algorithm does not accept, such as a 20-byte AES key.
    case incorrectKeySize
    /// Thrown when a parameter has the wrong size: a nonce that is not 12 bytes, a sealed box shorter
    /// than nonce and tag, an output length a key derivation cannot produce, or too few PBKDF2 rounds.
    case incorrectParameterSize
    /// Thrown when an authentication tag does not verify: the ciphertext, tag, nonce, key or
    /// authenticated data differ from those that were sealed. No plaintext is returned.
    case authenticationFailure
    /// Thrown when a parameter is outside the values an operation accepts, for example a message longer
    /// than AES-GCM can encrypt under one nonce.
    case invalidParameter

    public var description: String {
        switch self {
        case .incorrectKeySize: return "incorrect key size"
        case .incorrectParameterSize: return "incorrect parameter size"
        case .authenticationFailure: return "authentication failure"
        case .invalidParameter: return "invalid parameter"
        }
    }
}
