/// A certificate in a PKCS #12 file (a certBag holding an X.509 certificate), with the bag's attributes.
///
/// For example:
/// ```swift
/// let bag = PKCS12Certificate(der: certificateDER, friendlyName: "Alice", localKeyID: [1])
/// ```
public struct PKCS12Certificate: Hashable, Sendable {
    /// The certificate's DER (not checked here:
    /// ``Certificate/init(der:label:accessGroup:accessible:synchronizable:)`` reads it).
    public var der: [UInt8]
    /// The friendlyName attribute (PKCS #9), if the bag has one.
    public var friendlyName: String?
    /// The localKeyId attribute: the same bytes on a certificate and its private key pair them.
    public var localKeyID: [UInt8]?

    /// Creates a certificate bag's contents.
    ///
    /// - Parameters:
    ///   - der: The X.509 certificate, DER.
    ///   - friendlyName: The name tools show for it, or `nil`.
    ///   - localKeyID: The bytes pairing it with its key, or `nil`.
    public init(der: [UInt8], friendlyName: String? = nil, localKeyID: [UInt8]? = nil) {
        self.der = der
        self.friendlyName = friendlyName
        self.localKeyID = localKeyID
    }
}
