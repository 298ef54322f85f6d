/// The algorithm of a key, as Apple's numeric `kSecAttrKeyType` codes; any other value may be used for
/// other algorithms.
///
/// For example:
/// ```swift
/// let key = Key(keyClass: .privateKey, keyType: .ellipticCurve, keySizeInBits: 256)
/// let custom = KeyType(rawValue: 1_000)
/// ```
public struct KeyType: RawRepresentable, Hashable, Sendable {
    /// The numeric code.
    public let rawValue: Int64

    /// Creates a key type from its numeric code.
    ///
    /// - Parameter rawValue: The code, such as 42 for RSA.
    public init(rawValue: Int64) {
        self.rawValue = rawValue
    }

    /// RSA, Apple's code 42 (`kSecAttrKeyTypeRSA`).
    public static let rsa = KeyType(rawValue: 42)
    /// Elliptic curve, Apple's code 73 (`kSecAttrKeyTypeECSECPrimeRandom`).
    public static let ellipticCurve = KeyType(rawValue: 73)
}
