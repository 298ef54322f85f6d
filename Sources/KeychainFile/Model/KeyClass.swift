/// The class of a key: public, private or symmetric (SPEC.md §8.2 keyClass).
///
/// For example:
/// ```swift
/// let signingKey = Key(keyClass: .privateKey, keyType: .ellipticCurve, keySizeInBits: 256)
/// assert(KeyClass.privateKey.rawValue == 1)
/// ```
public enum KeyClass: Int64, Sendable, CaseIterable {
    /// The public half of a key pair (`kSecAttrKeyClassPublic`), 0.
    case publicKey = 0
    /// The private half of a key pair (`kSecAttrKeyClassPrivate`), 1.
    case privateKey = 1
    /// A symmetric key (`kSecAttrKeyClassSymmetric`), 2.
    case symmetric = 2
}
