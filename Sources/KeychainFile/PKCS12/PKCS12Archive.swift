/// The contents of a PKCS #12 file (RFC 7292, `.p12`, `.pfx`): certificates and private keys, with the
/// friendly names and local key IDs that pair a key with its certificate.
///
/// Written as OpenSSL 3 writes by default: the certificates in one encrypted SafeContents and each key in a
/// pkcs8ShroudedKeyBag, both encrypted with PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC), and the whole checked by an
/// HMAC-SHA256 MAC whose key comes from the PKCS #12 key derivation (RFC 7292 Appendix B). Read: that, AES-128
/// and AES-192 in place of AES-256, PBES2 with DES-EDE3-CBC, plain certificate and key bags, a MAC with SHA-1 or
/// SHA-256, and the legacy ciphers that macOS, Windows and OpenSSL 1.x still write (`pbeWithSHAAnd3-KeyTripleDES-CBC`,
/// `pbeWithSHAAnd2-KeyTripleDES-CBC`, `pbeWithSHAAnd128BitRC2-CBC`, `pbewithSHAAnd40BitRC2-CBC`; never written), in
/// DER or BER. RC4 and PKCS #5 v1 DES are refused by name, as are public-key integrity and encryption modes and
/// CRL, secret and nested bags. Attributes other than friendlyName and
/// localKeyId are not kept.
///
/// For example:
/// ```swift
/// let archive = PKCS12Archive(certificates: [PKCS12Certificate(der: certificateDER, friendlyName: "Alice", localKeyID: [1])],
///                             privateKeys: [PKCS12PrivateKey(pkcs8: keyDER, friendlyName: "Alice", localKeyID: [1])])
/// let file = try archive.encoded(password: "secret")
/// let read = try PKCS12Archive(bytes: file, password: "secret")   // read == archive
/// ```
public struct PKCS12Archive: Hashable, Sendable {
    /// The iteration count written by default for PBKDF2 and for the MAC's key derivation (OWASP's 2023 advice
    /// for PBKDF2-HMAC-SHA256).
    public static let defaultIterationCount = 600_000
    /// The largest iteration count read or written. A reader also spends at most five times this on one file in
    /// all, so that a file of many bags cannot make reading it take hours either.
    public static let maximumIterationCount = 10_000_000

    /// The certificates, in file order.
    public var certificates: [PKCS12Certificate]
    /// The private keys, in file order.
    public var privateKeys: [PKCS12PrivateKey]

    /// Creates an archive.
    ///
    /// - Parameters:
    ///   - certificates: The certificates.
    ///   - privateKeys: The private keys.
    public init(certificates: [PKCS12Certificate] = [], privateKeys: [PKCS12PrivateKey] = []) {
        self.certificates = certificates
        self.privateKeys = privateKeys
    }
}
