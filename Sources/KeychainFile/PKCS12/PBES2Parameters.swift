import KeychainCrypto

/// The parameters of PBES2 (RFC 8018 §6.2) as PKCS #12 files use it — PBKDF2 with HMAC-SHA256, then AES-CBC
/// (or, read only, DES-EDE3-CBC) — read from and written as an AlgorithmIdentifier, and the encryption and
/// decryption they describe.
///
/// The password goes to PBKDF2 as its UTF-8 bytes, as OpenSSL passes it (RFC 7292's BMPString form is only
/// for the PKCS #12 key derivation of the MAC and the legacy ciphers).
struct PBES2Parameters {
    /// The PBKDF2 salt.
    let salt: [UInt8]
    /// The PBKDF2 iteration count.
    let iterations: Int
    /// The key size in bytes: 16, 24 or 32 for AES, 24 for Triple-DES.
    let keyByteCount: Int
    /// The CBC initialization vector: 16 bytes for AES, 8 for Triple-DES.
    let iv: [UInt8]
    /// Whether the cipher is DES-EDE3-CBC (RFC 8018 B.2.2), read from older files but never written, rather
    /// than AES-CBC.
    let isTripleDES: Bool

    init(salt: [UInt8], iterations: Int, keyByteCount: Int, iv: [UInt8], isTripleDES: Bool = false) {
        self.salt = salt
        self.iterations = iterations
        self.keyByteCount = keyByteCount
        self.iv = iv
        self.isTripleDES = isTripleDES
    }

    /// Reads the AlgorithmIdentifier `algorithm` (read by `reader` or a reader of the same bytes); `context` says
    /// where offsets count from when not the file.
    ///
    /// - Throws: ``PKCS12Error/unsupportedAlgorithm(_:)`` for another scheme, key derivation function, PRF or
    ///   cipher; ``PKCS12Error/iterationCountOutOfRange(_:)``;
    ///   ``PKCS12Error/malformed(offset:reason:)`` for anything not as RFC 8018 and RFC 3565 define it.
    init(algorithm: DERReader.Element, in reader: DERReader, context: String? = nil) throws(PKCS12Error) {
        let der = { (body: () throws(DERError) -> Void) throws(PKCS12Error) in try PKCS12Error.readingDER(context, body) }
        var identifier = reader
        var scheme: [UInt8] = []
        try der { () throws(DERError) in
            identifier = try reader.reader(into: algorithm)
            scheme = identifier.content(of: try identifier.readElement(tag: 0x06, "encryption algorithm OBJECT IDENTIFIER"))
        }
        guard scheme == PKCS12ObjectIdentifier.pbes2 else {
            throw .unsupportedAlgorithm(PKCS12ObjectIdentifier.describe(scheme)
                + "; PBES2 (PBKDF2-HMAC-SHA256 with AES-CBC or DES-EDE3-CBC) and the PKCS #12 password-based ciphers are read")
        }
        var parameters = reader
        var kdf = reader
        var kdfIdentifier: [UInt8] = []
        try der { () throws(DERError) in
            parameters = try identifier.reader(into: try identifier.readElement(tag: 0x30, "PBES2-params"))
            try identifier.expectEnd("the PBES2 AlgorithmIdentifier")
            kdf = try parameters.reader(into: try parameters.readElement(tag: 0x30, "keyDerivationFunc"))
            kdfIdentifier = kdf.content(of: try kdf.readElement(tag: 0x06, "keyDerivationFunc OBJECT IDENTIFIER"))
        }
        guard kdfIdentifier == PKCS12ObjectIdentifier.pbkdf2 else {
            throw .unsupportedAlgorithm("key derivation " + PKCS12ObjectIdentifier.describe(kdfIdentifier))
        }
        var salt: [UInt8] = []
        var iterations = 0
        var keyLength: Int?
        // The PRF defaults to hmacWithSHA1, which PBKDF2 here does not implement.
        var prf = PKCS12ObjectIdentifier.hmacWithSHA1
        var cipherIdentifier: [UInt8] = []
        var iv: [UInt8] = []
        try der { () throws(DERError) in
            var pbkdf2 = try kdf.reader(into: try kdf.readElement(tag: 0x30, "PBKDF2-params"))
            try kdf.expectEnd("keyDerivationFunc")
            salt = pbkdf2.content(of: try pbkdf2.readElement(tag: 0x04, "PBKDF2 salt OCTET STRING"))
            iterations = try pbkdf2.readInteger("PBKDF2 iterationCount", maximum: Int(Int32.max))
            if pbkdf2.peekTag() == 0x02 { keyLength = try pbkdf2.readInteger("PBKDF2 keyLength", maximum: 64) }
            if !pbkdf2.isAtEnd {
                var prfIdentifier = try pbkdf2.reader(into: try pbkdf2.readElement(tag: 0x30, "PBKDF2 prf"))
                prf = prfIdentifier.content(of: try prfIdentifier.readElement(tag: 0x06, "prf OBJECT IDENTIFIER"))
                if !prfIdentifier.isAtEnd { _ = try prfIdentifier.readElement(tag: 0x05, "prf parameters NULL") }
                try prfIdentifier.expectEnd("the prf AlgorithmIdentifier")
            }
            try pbkdf2.expectEnd("PBKDF2-params")
            var cipher = try parameters.reader(into: try parameters.readElement(tag: 0x30, "encryptionScheme"))
            try parameters.expectEnd("PBES2-params")
            cipherIdentifier = cipher.content(of: try cipher.readElement(tag: 0x06, "encryptionScheme OBJECT IDENTIFIER"))
            if cipher.peekTag() == 0x04 {
                let ivElement = try cipher.readElement(tag: 0x04, "CBC IV OCTET STRING")
                iv = cipher.content(of: ivElement)
                let expected = cipherIdentifier == PKCS12ObjectIdentifier.desEDE3CBC ? Insecure.TripleDES.blockByteCount : AES.blockByteCount
                guard iv.count == expected else {
                    throw DERError(offset: ivElement.start, reason: "a CBC IV of \(iv.count) bytes (\(expected) expected)")
                }
            }
            try cipher.expectEnd("encryptionScheme")
        }
        guard prf == PKCS12ObjectIdentifier.hmacWithSHA256 else {
            throw .unsupportedAlgorithm("PBKDF2 with " + PKCS12ObjectIdentifier.describe(prf))
        }
        let keyByteCount: Int
        switch cipherIdentifier {
        case PKCS12ObjectIdentifier.aes128CBC: keyByteCount = 16
        case PKCS12ObjectIdentifier.aes192CBC: keyByteCount = 24
        case PKCS12ObjectIdentifier.aes256CBC: keyByteCount = 32
        case PKCS12ObjectIdentifier.desEDE3CBC: keyByteCount = 24
        default: throw .unsupportedAlgorithm("cipher " + PKCS12ObjectIdentifier.describe(cipherIdentifier))
        }
        let isTripleDES = cipherIdentifier == PKCS12ObjectIdentifier.desEDE3CBC
        guard !iv.isEmpty else {
            throw .malformed(offset: algorithm.start, reason: "a CBC cipher without its IV" + (context.map { ", \($0)" } ?? ""))
        }
        if let keyLength, keyLength != keyByteCount {
            throw .malformed(offset: algorithm.start, reason: "PBKDF2 keyLength \(keyLength) for a \(keyByteCount)-byte key"
                + (context.map { ", \($0)" } ?? ""))
        }
        guard (1...PKCS12Archive.maximumIterationCount).contains(iterations) else {
            throw .iterationCountOutOfRange(iterations)
        }
        self.init(salt: salt, iterations: iterations, keyByteCount: keyByteCount, iv: iv, isTripleDES: isTripleDES)
    }

    /// The AlgorithmIdentifier: PBES2 with PBKDF2 (salt, iterations, HMAC-SHA256) and AES-CBC with the IV, as
    /// OpenSSL 3 writes it (no keyLength; the PRF's parameters NULL).
    var algorithmIdentifier: [UInt8] {
        let cipher: [UInt8] = switch keyByteCount {
        case 16: PKCS12ObjectIdentifier.aes128CBC
        case 24: PKCS12ObjectIdentifier.aes192CBC
        default: PKCS12ObjectIdentifier.aes256CBC
        }
        return DERWriter.sequence(
            DERWriter.objectIdentifier(PKCS12ObjectIdentifier.pbes2),
            DERWriter.sequence(
                DERWriter.sequence(
                    DERWriter.objectIdentifier(PKCS12ObjectIdentifier.pbkdf2),
                    DERWriter.sequence(
                        DERWriter.octetString(salt), DERWriter.integer(iterations),
                        DERWriter.sequence(DERWriter.objectIdentifier(PKCS12ObjectIdentifier.hmacWithSHA256), DERWriter.null))),
                DERWriter.sequence(DERWriter.objectIdentifier(cipher), DERWriter.octetString(iv))))
    }

    /// Encrypts `plaintext` under the key PBKDF2 derives from `password`, with AES (Triple-DES is never written).
    func encrypt(_ plaintext: [UInt8], password: String) throws(PKCS12Error) -> [UInt8] {
        guard !isTripleDES else { throw PKCS12Error.invalidParameter("Triple-DES is read, never written") }
        do throws(CryptoKitError) {
            return try AES.CBC.encrypt(plaintext, using: try key(password), iv: iv)
        } catch {
            throw PKCS12Error.invalidParameter("AES-CBC encryption failed: \(error)")
        }
    }

    /// Decrypts `ciphertext` under the key PBKDF2 derives from `password`.
    ///
    /// - Parameter what: What is being decrypted, for the error.
    /// - Throws: ``PKCS12Error/decryptionFailed(_:)`` when the ciphertext is not whole blocks or its padding
    ///   does not check.
    func decrypt(_ ciphertext: [UInt8], password: String, what: String) throws(PKCS12Error) -> [UInt8] {
        do throws(CryptoKitError) {
            if isTripleDES { return try Insecure.TripleDES.CBC.decrypt(ciphertext, using: try key(password), iv: iv) }
            return try AES.CBC.decrypt(ciphertext, using: try key(password), iv: iv)
        } catch {
            throw PKCS12Error.decryptionFailed(what)
        }
    }

    private func key(_ password: String) throws(CryptoKitError) -> SymmetricKey {
        try KDF.Insecure.PBKDF2.deriveKey(from: Array(password.utf8), salt: salt, using: .sha256,
                                          outputByteCount: keyByteCount, unsafeUncheckedRounds: iterations)
    }
}
