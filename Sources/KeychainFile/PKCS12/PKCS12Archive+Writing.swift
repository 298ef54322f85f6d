import KeychainCrypto

extension PKCS12Archive {
    /// Writes the archive as a PKCS #12 file protected by `password`, as OpenSSL 3 writes by default: the
    /// certificates encrypted together and each key in a pkcs8ShroudedKeyBag, with PBES2 (PBKDF2-HMAC-SHA256,
    /// AES-256-CBC, a 16-byte random salt and IV each), and an HMAC-SHA256 MAC keyed by the PKCS #12 key
    /// derivation (16-byte random salt). Salts and IVs come from the system's secure random generator.
    ///
    /// For example:
    /// ```swift
    /// let file = try archive.encoded(password: "secret", iterations: 600_000)
    /// ```
    ///
    /// - Parameters:
    ///   - password: The password; OpenSSL, macOS and Windows read a file with any password, the empty one too.
    ///   - iterations: The iteration count of PBKDF2 and of the MAC key's derivation.
    /// - Returns: The file's bytes (DER).
    /// - Throws: ``PKCS12Error/invalidParameter(_:)`` for an archive with nothing in it; ``PKCS12Error/iterationCountOutOfRange(_:)``.
    public func encoded(password: String, iterations: Int = defaultIterationCount) throws(PKCS12Error) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return try encoded(password: password, iterations: iterations, using: &generator)
    }

    /// Writes the archive as ``encoded(password:iterations:)`` does, with salts and IVs drawn from `generator`.
    ///
    /// Use a seeded generator only for reproducible test files; files that protect anything need the
    /// system's generator.
    ///
    /// - Parameters:
    ///   - password: The password.
    ///   - iterations: The iteration count of PBKDF2 and of the MAC key's derivation.
    ///   - generator: Where salts and IVs come from.
    /// - Returns: The file's bytes (DER).
    /// - Throws: ``PKCS12Error/invalidParameter(_:)`` for an archive with nothing in it; ``PKCS12Error/iterationCountOutOfRange(_:)``.
    public func encoded<Generator: RandomNumberGenerator>(
        password: String, iterations: Int, using generator: inout Generator
    ) throws(PKCS12Error) -> [UInt8] {
        guard !certificates.isEmpty || !privateKeys.isEmpty else {
            throw .invalidParameter("an archive without certificates or keys")
        }
        guard (1...Self.maximumIterationCount).contains(iterations) else { throw .iterationCountOutOfRange(iterations) }
        func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) } }
        func parameters() -> PBES2Parameters {
            PBES2Parameters(salt: random(16), iterations: iterations, keyByteCount: 32, iv: random(16))
        }

        var contentInfos: [UInt8] = []
        if !certificates.isEmpty {
            let bags = certificates.map { certificate in
                let value = DERWriter.sequence(
                    DERWriter.objectIdentifier(PKCS12ObjectIdentifier.x509Certificate),
                    DERWriter.element(0xa0, DERWriter.octetString(certificate.der)))
                return Self.safeBag(PKCS12ObjectIdentifier.certBag, value, certificate.friendlyName, certificate.localKeyID)
            }
            let encryption = parameters()
            let ciphertext = try encryption.encrypt(DERWriter.element(0x30, bags.flatMap { $0 }), password: password)
            let encryptedData = DERWriter.sequence(
                DERWriter.integer(0),
                DERWriter.sequence(DERWriter.objectIdentifier(PKCS12ObjectIdentifier.data), encryption.algorithmIdentifier,
                                   DERWriter.element(0x80, ciphertext)))
            contentInfos += DERWriter.sequence(DERWriter.objectIdentifier(PKCS12ObjectIdentifier.encryptedData),
                                               DERWriter.element(0xa0, encryptedData))
        }
        if !privateKeys.isEmpty {
            var bags: [UInt8] = []
            for key in privateKeys {
                let encryption = parameters()
                let value = DERWriter.sequence(encryption.algorithmIdentifier,
                                               DERWriter.octetString(try encryption.encrypt(key.pkcs8, password: password)))
                bags += Self.safeBag(PKCS12ObjectIdentifier.pkcs8ShroudedKeyBag, value, key.friendlyName, key.localKeyID)
            }
            contentInfos += DERWriter.sequence(DERWriter.objectIdentifier(PKCS12ObjectIdentifier.data),
                                               DERWriter.element(0xa0, DERWriter.octetString(DERWriter.element(0x30, bags))))
        }
        let authenticatedSafe = DERWriter.element(0x30, contentInfos)
        let mac = try PKCS12MAC(authenticating: authenticatedSafe, password: password, salt: random(16), iterations: iterations)
        return DERWriter.sequence(
            DERWriter.integer(3),
            DERWriter.sequence(DERWriter.objectIdentifier(PKCS12ObjectIdentifier.data),
                               DERWriter.element(0xa0, DERWriter.octetString(authenticatedSafe))),
            mac.encoded)
    }

    /// A SafeBag: its type, its value in `[0] EXPLICIT`, and the friendlyName and localKeyId attributes it has.
    private static func safeBag(_ type: [UInt8], _ value: [UInt8], _ friendlyName: String?, _ localKeyID: [UInt8]?) -> [UInt8] {
        var attributes: [[UInt8]] = []
        if let friendlyName {
            attributes.append(DERWriter.sequence(DERWriter.objectIdentifier(PKCS12ObjectIdentifier.friendlyName),
                                                 DERWriter.set(of: [DERWriter.bmpString(friendlyName)])))
        }
        if let localKeyID {
            attributes.append(DERWriter.sequence(DERWriter.objectIdentifier(PKCS12ObjectIdentifier.localKeyID),
                                                 DERWriter.set(of: [DERWriter.octetString(localKeyID)])))
        }
        var bag = DERWriter.objectIdentifier(type) + DERWriter.element(0xa0, value)
        if !attributes.isEmpty { bag += DERWriter.set(of: attributes) }
        return DERWriter.element(0x30, bag)
    }
}
