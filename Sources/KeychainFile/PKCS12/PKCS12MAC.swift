import KeychainCrypto

/// A PKCS #12 file's MacData (RFC 7292 §4): an HMAC over the AuthenticatedSafe keyed by the PKCS #12 key
/// derivation of the password (ID 3), with SHA-256 or, in older files, SHA-1.
struct PKCS12MAC {
    /// The hash: SHA-256 (written) or SHA-1 (read).
    enum Hash { case sha256, sha1 }

    let hash: Hash
    let digest: [UInt8]
    let salt: [UInt8]
    let iterations: Int

    /// The MacData of `content` under `password` with HMAC-SHA256.
    init(authenticating content: [UInt8], password: String, salt: [UInt8], iterations: Int) throws(PKCS12Error) {
        self.hash = .sha256
        self.salt = salt
        self.iterations = iterations
        self.digest = try Self.code(.sha256, content, password: password, salt: salt, iterations: iterations)
    }

    /// Reads the MacData `element`.
    ///
    /// - Throws: ``PKCS12Error/unsupportedAlgorithm(_:)`` for another digest, ``PKCS12Error/iterationCountOutOfRange(_:)``,
    ///   ``PKCS12Error/malformed(offset:reason:)``.
    init(element: DERReader.Element, in reader: DERReader) throws(PKCS12Error) {
        var algorithm: [UInt8] = []
        var digest: [UInt8] = []
        var digestStart = 0
        var salt: [UInt8] = []
        var iterations = 1
        try PKCS12Error.readingDER { () throws(DERError) in
            var fields = try reader.reader(into: element)
            var digestInfo = try fields.reader(into: try fields.readElement(tag: 0x30, "MacData DigestInfo"))
            var identifier = try digestInfo.reader(into: try digestInfo.readElement(tag: 0x30, "MAC digestAlgorithm"))
            algorithm = identifier.content(of: try identifier.readElement(tag: 0x06, "MAC digest OBJECT IDENTIFIER"))
            if !identifier.isAtEnd { _ = try identifier.readElement(tag: 0x05, "MAC digest parameters NULL") }
            try identifier.expectEnd("the MAC digestAlgorithm")
            let digestElement = try digestInfo.readElement(tag: 0x04, "MAC digest OCTET STRING")
            digestStart = digestElement.start
            digest = digestInfo.content(of: digestElement)
            try digestInfo.expectEnd("DigestInfo")
            salt = fields.content(of: try fields.readElement(tag: 0x04, "macSalt OCTET STRING"))
            if !fields.isAtEnd { iterations = try fields.readInteger("MAC iterations", maximum: Int(Int32.max)) }
            try fields.expectEnd("MacData")
        }
        switch algorithm {
        case PKCS12ObjectIdentifier.sha256: hash = .sha256
        case PKCS12ObjectIdentifier.sha1: hash = .sha1
        default: throw .unsupportedAlgorithm("MAC digest " + PKCS12ObjectIdentifier.describe(algorithm))
        }
        let expected = hash == .sha256 ? 32 : 20
        guard digest.count == expected else {
            throw .malformed(offset: digestStart, reason: "a MAC of \(digest.count) bytes (\(expected) expected)")
        }
        guard (1...PKCS12Archive.maximumIterationCount).contains(iterations) else { throw .iterationCountOutOfRange(iterations) }
        self.digest = digest
        self.salt = salt
        self.iterations = iterations
    }

    /// The MacData DER.
    var encoded: [UInt8] {
        DERWriter.sequence(
            DERWriter.sequence(
                DERWriter.sequence(DERWriter.objectIdentifier(hash == .sha256 ? PKCS12ObjectIdentifier.sha256 : PKCS12ObjectIdentifier.sha1),
                                   DERWriter.null),
                DERWriter.octetString(digest)),
            DERWriter.octetString(salt), DERWriter.integer(iterations))
    }

    /// Checks the MAC of `content` under `password`, comparing in constant time.
    ///
    /// - Throws: ``PKCS12Error/wrongPassword`` when it does not verify.
    func verify(_ content: [UInt8], password: String) throws(PKCS12Error) {
        let computed = try Self.code(hash, content, password: password, salt: salt, iterations: iterations)
        var difference: UInt8 = 0
        for index in 0..<digest.count { difference |= computed[index] ^ digest[index] }
        guard difference == 0 else { throw .wrongPassword }
    }

    private static func code(_ hash: Hash, _ content: [UInt8], password: String, salt: [UInt8], iterations: Int) throws(PKCS12Error) -> [UInt8] {
        let bmp = KDF.Insecure.PKCS12.bmpPassword(password)
        do throws(CryptoKitError) {
            switch hash {
            case .sha256:
                let key = try KDF.Insecure.PKCS12.deriveKey(SHA256.self, password: bmp, salt: salt, purpose: .mac,
                                                            iterations: iterations, outputByteCount: 32)
                return Array(HMAC<SHA256>.authenticationCode(for: content, using: key))
            case .sha1:
                let key = try KDF.Insecure.PKCS12.deriveKey(Insecure.SHA1.self, password: bmp, salt: salt, purpose: .mac,
                                                            iterations: iterations, outputByteCount: 20)
                return Array(HMAC<Insecure.SHA1>.authenticationCode(for: content, using: key))
            }
        } catch {
            throw .invalidParameter("the MAC key cannot be derived: \(error)")
        }
    }
}
