/// How a PKCS #12 file encrypted a SafeContents or a private key: PBES2, or one of the legacy ciphers of
/// RFC 7292 Appendix C (read only).
enum PKCS12ContentEncryption {
    case pbes2(PBES2Parameters)
    case legacy(PKCS12LegacyPBEParameters)

    /// Reads the AlgorithmIdentifier `algorithm` (read by `reader` or a reader of the same bytes); `context`
    /// says where offsets count from when not the file.
    ///
    /// - Throws: ``PKCS12Error/unsupportedAlgorithm(_:)`` for another scheme (RC4, PKCS #5 v1 DES among them) or
    ///   PBES2 with what is not read; ``PKCS12Error/iterationCountOutOfRange(_:)``;
    ///   ``PKCS12Error/malformed(offset:reason:)``.
    init(algorithm: DERReader.Element, in reader: DERReader, context: String?) throws(PKCS12Error) {
        var identifier = reader
        var scheme: [UInt8] = []
        try PKCS12Error.readingDER(context) { () throws(DERError) in
            identifier = try reader.reader(into: algorithm)
            scheme = identifier.content(of: try identifier.readElement(tag: 0x06, "encryption algorithm OBJECT IDENTIFIER"))
        }
        if let cipher = PKCS12LegacyPBEParameters.cipher(for: scheme) {
            self = .legacy(try PKCS12LegacyPBEParameters(cipher: cipher, parametersIn: identifier, context: context))
        } else {
            self = .pbes2(try PBES2Parameters(algorithm: algorithm, in: reader, context: context))
        }
    }

    /// The key-derivation rounds decrypting costs: PBKDF2's iterations; twice the PKCS #12 KDF's for the legacy
    /// schemes, which derive the key and the IV apart.
    var derivationRounds: Int {
        switch self {
        case .pbes2(let parameters): parameters.iterations
        case .legacy(let parameters): 2 * parameters.iterations
        }
    }

    /// Decrypts `ciphertext` with `password`.
    ///
    /// - Parameter what: What is being decrypted, for the error.
    /// - Throws: ``PKCS12Error/decryptionFailed(_:)`` when it does not decrypt.
    func decrypt(_ ciphertext: [UInt8], password: String, what: String) throws(PKCS12Error) -> [UInt8] {
        switch self {
        case .pbes2(let parameters): try parameters.decrypt(ciphertext, password: password, what: what)
        case .legacy(let parameters): try parameters.decrypt(ciphertext, password: password, what: what)
        }
    }
}
