/// Namespaces for key derivation functions, as in swift-crypto's `_CryptoExtras`.
public enum KDF: Sendable {
    /// Key derivation functions that are safe only with well-chosen parameters, such as PBKDF2.
    public enum Insecure: Sendable {}
}
