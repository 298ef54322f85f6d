import KeychainCrypto

/// The password-based encryption of RFC 7292 Appendix C that older PKCS #12 files use — macOS Keychain Access
/// and `security export`, Windows, OpenSSL 1.x and `openssl pkcs12 -legacy` — read, never written:
/// `pbeWithSHAAnd3-KeyTripleDES-CBC`, `pbeWithSHAAnd2-KeyTripleDES-CBC`, `pbeWithSHAAnd128BitRC2-CBC` and
/// `pbewithSHAAnd40BitRC2-CBC`.
///
/// The key and the IV both come from the PKCS #12 key derivation with SHA-1 (IDs 1 and 2) of the password as
/// a BMPString, the salt and the iteration count of the `pkcs-12PbeParams`.
struct PKCS12LegacyPBEParameters {
    /// A cipher of RFC 7292 Appendix C, with the key length the key derivation produces for it.
    enum Cipher: Equatable {
        case tripleDESThreeKey, tripleDESTwoKey, rc2(effectiveKeyBits: Int)

        var keyByteCount: Int {
            switch self {
            case .tripleDESThreeKey: 24
            case .tripleDESTwoKey: 16
            case .rc2(let bits): bits / 8
            }
        }
    }

    let cipher: Cipher
    let salt: [UInt8]
    let iterations: Int

    /// The cipher a legacy scheme identifier names, or `nil` when `scheme` is not one of them.
    static func cipher(for scheme: [UInt8]) -> Cipher? {
        switch scheme {
        case PKCS12ObjectIdentifier.pbeWithSHAAnd3KeyTripleDESCBC: .tripleDESThreeKey
        case PKCS12ObjectIdentifier.pbeWithSHAAnd2KeyTripleDESCBC: .tripleDESTwoKey
        case PKCS12ObjectIdentifier.pbeWithSHAAnd128BitRC2CBC: .rc2(effectiveKeyBits: 128)
        case PKCS12ObjectIdentifier.pbeWithSHAAnd40BitRC2CBC: .rc2(effectiveKeyBits: 40)
        default: nil
        }
    }

    /// Reads the `pkcs-12PbeParams` (salt, iterations) that follow the scheme identifier in `identifier`, the
    /// reader inside the AlgorithmIdentifier.
    ///
    /// - Throws: ``PKCS12Error/malformed(offset:reason:)``, ``PKCS12Error/iterationCountOutOfRange(_:)``.
    init(cipher: Cipher, parametersIn identifier: DERReader, context: String?) throws(PKCS12Error) {
        var salt: [UInt8] = []
        var iterations = 0
        try PKCS12Error.readingDER(context) { () throws(DERError) in
            var fields = identifier
            var parameters = try fields.reader(into: try fields.readElement(tag: 0x30, "pkcs-12PbeParams SEQUENCE"))
            try fields.expectEnd("the password-based encryption AlgorithmIdentifier")
            salt = parameters.content(of: try parameters.readElement(tag: 0x04, "pkcs-12PbeParams salt OCTET STRING"))
            iterations = try parameters.readInteger("pkcs-12PbeParams iterations", maximum: Int(Int32.max))
            try parameters.expectEnd("pkcs-12PbeParams")
        }
        guard (1...PKCS12Archive.maximumIterationCount).contains(iterations) else { throw .iterationCountOutOfRange(iterations) }
        self.cipher = cipher
        self.salt = salt
        self.iterations = iterations
    }

    /// Decrypts `ciphertext` under the key and IV derived from `password`.
    ///
    /// - Parameter what: What is being decrypted, for the error.
    /// - Throws: ``PKCS12Error/decryptionFailed(_:)`` when the ciphertext is not whole blocks or its padding
    ///   does not check.
    func decrypt(_ ciphertext: [UInt8], password: String, what: String) throws(PKCS12Error) -> [UInt8] {
        let bmp = KDF.Insecure.PKCS12.bmpPassword(password)
        let key: SymmetricKey
        let iv: [UInt8]
        do throws(CryptoKitError) {
            key = try KDF.Insecure.PKCS12.deriveKey(Insecure.SHA1.self, password: bmp, salt: salt, purpose: .encryptionKey,
                                                    iterations: iterations, outputByteCount: cipher.keyByteCount)
            iv = try KDF.Insecure.PKCS12.deriveKey(Insecure.SHA1.self, password: bmp, salt: salt, purpose: .initializationVector,
                                                   iterations: iterations, outputByteCount: 8).withUnsafeBytes { Array($0) }
        } catch {
            throw .invalidParameter("the key cannot be derived: \(error)")
        }
        do throws(CryptoKitError) {
            switch cipher {
            case .tripleDESThreeKey, .tripleDESTwoKey:
                return try Insecure.TripleDES.CBC.decrypt(ciphertext, using: key, iv: iv)
            case .rc2(let bits):
                return try Insecure.RC2.CBC.decrypt(ciphertext, using: key, effectiveKeyBits: bits, iv: iv)
            }
        } catch {
            throw .decryptionFailed(what)
        }
    }
}
