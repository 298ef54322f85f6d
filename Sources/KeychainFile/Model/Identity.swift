/// A certificate and the private key that belongs to it, like Apple's `kSecClassIdentity`.
///
/// An identity is not stored as such (SPEC.md §8.1): it is found by pairing a certificate with a private
/// key (key class 1) whose application label equals the certificate's public key hash.
///
/// For example:
/// ```swift
/// let certificate = try Certificate(der: derBytes)
/// let key = Key(keyClass: .privateKey, keyType: .ellipticCurve, keySizeInBits: 256, value: keyBytes)
/// let identity = try Identity(certificate: certificate, privateKey: key)
/// assert(identity.privateKey.applicationLabel == certificate.publicKeyHash)
/// ```
public struct Identity: Hashable, Sendable {
    /// The certificate.
    public let certificate: Certificate
    /// The private key, whose application label is the certificate's public key hash.
    public let privateKey: Key

    /// Pairs a certificate with its private key.
    ///
    /// When the key's application label is empty it is set to the certificate's public key hash (computed
    /// from the certificate's DER when the attribute is missing).
    ///
    /// - Parameters:
    ///   - certificate: The certificate.
    ///   - privateKey: Its private key.
    /// - Throws: `KeychainError.invalidParameter` when the key is not a private key, the certificate has
    ///   no public key hash and no DER to compute it from, or the key's application label is not empty and
    ///   differs from the hash.
    public init(certificate: Certificate, privateKey: Key) throws(KeychainError) {
        guard privateKey.keyClass == .privateKey else {
            throw .invalidParameter("identity: the key's class is \(privateKey.keyClass), not private")
        }
        let hash: [UInt8]
        if let stored = certificate.publicKeyHash {
            hash = stored
        } else if let der = certificate.der {
            hash = try CertificateFields(der: der).publicKeyHash
        } else {
            throw .invalidParameter("identity: the certificate has no public key hash and no DER")
        }
        var key = privateKey
        if key.applicationLabel.isEmpty {
            key.applicationLabel = hash
        } else if key.applicationLabel != hash {
            throw .invalidParameter("identity: the key's applicationLabel is not the certificate's publicKeyHash")
        }
        self.certificate = certificate
        self.privateKey = key
    }
}
