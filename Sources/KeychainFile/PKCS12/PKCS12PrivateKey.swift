/// A private key in a PKCS #12 file (a keyBag, or a pkcs8ShroudedKeyBag once decrypted), with the bag's
/// attributes.
///
/// For example:
/// ```swift
/// let bag = PKCS12PrivateKey(pkcs8: privateKeyInfoDER, friendlyName: "Alice", localKeyID: [1])
/// ```
public struct PKCS12PrivateKey: Hashable, Sendable {
    /// The key as PKCS #8 PrivateKeyInfo DER (RFC 5208), unencrypted: a secret.
    public var pkcs8: [UInt8]
    /// The friendlyName attribute (PKCS #9), if the bag has one.
    public var friendlyName: String?
    /// The localKeyId attribute: the same bytes on a certificate and its private key pair them.
    public var localKeyID: [UInt8]?

    /// Creates a key bag's contents.
    ///
    /// - Parameters:
    ///   - pkcs8: The private key, PKCS #8 PrivateKeyInfo DER.
    ///   - friendlyName: The name tools show for it, or `nil`.
    ///   - localKeyID: The bytes pairing it with its certificate, or `nil`.
    public init(pkcs8: [UInt8], friendlyName: String? = nil, localKeyID: [UInt8]? = nil) {
        self.pkcs8 = pkcs8
        self.friendlyName = friendlyName
        self.localKeyID = localKeyID
    }
}
