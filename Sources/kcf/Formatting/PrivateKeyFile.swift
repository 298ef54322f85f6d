import KeychainCrypto
import KeychainFile

/// A private key read from a file, converted to the form Apple's keychain stores
/// (`SecKeyCopyExternalRepresentation`): RSA as the PKCS #1 RSAPrivateKey DER, elliptic-curve keys as
/// X9.63 `04 ‖ X ‖ Y ‖ K`.
///
/// Reads PEM or DER: PKCS #8 PrivateKeyInfo (`PRIVATE KEY`) holding RSA or EC, PKCS #1 (`RSA PRIVATE KEY`),
/// SEC 1 ECPrivateKey (`EC PRIVATE KEY`, which must carry its public key: kcf does no curve arithmetic), or
/// raw X9.63 bytes. Encrypted PKCS #8 is not read.
///
/// The key's application label is SHA-1 of its public key bits — Apple's public key hash — so it pairs
/// with its certificate into an identity.
struct PrivateKeyFile {
    /// RSA or elliptic curve.
    let keyType: KeyType
    /// The modulus size (RSA) or curve size (EC), in bits.
    let sizeInBits: Int64
    /// The bytes stored as the key's secret.
    let value: [UInt8]
    /// SHA-1 of the public key bits.
    let publicKeyHash: [UInt8]

    /// Reads a key file's bytes.
    ///
    /// - Throws: `CommandError` (status `.invalidParameter`) naming what is not understood.
    init(fileBytes: [UInt8]) throws(CommandError) {
        var der = fileBytes
        if let block = try PEM.decode(fileBytes) {
            guard block.label.hasSuffix("PRIVATE KEY") else {
                throw Self.unsupported("a PEM \(block.label) block is not a private key")
            }
            guard block.label != "ENCRYPTED PRIVATE KEY" else {
                throw Self.unsupported("encrypted keys are not read; decrypt it first (openssl pkcs8 -in KEY -out PLAIN.pem)")
            }
            der = block.der
        }
        if der.first == 0x04 {
            self = try Self.x963(der)
        } else {
            self = try Self.structure(try DER.single(der))
        }
    }

    /// The key as a keychain item.
    func item(label: String?) -> Key {
        Key(keyClass: .privateKey, applicationLabel: publicKeyHash, keyType: keyType, keySizeInBits: sizeInBits,
            label: label, isPermanent: true, canDecrypt: keyType == .rsa ? true : nil,
            canDerive: keyType == .ellipticCurve ? true : nil, canSign: true, value: value)
    }

    private init(keyType: KeyType, sizeInBits: Int64, value: [UInt8], publicKeyBits: [UInt8]) {
        self.keyType = keyType
        self.sizeInBits = sizeInBits
        self.value = value
        self.publicKeyHash = Array(Insecure.SHA1.hash(data: publicKeyBits))
    }

    /// PKCS #8, PKCS #1 or SEC 1, told apart by their first fields.
    private static func structure(_ sequence: DER.Element) throws(CommandError) -> PrivateKeyFile {
        guard sequence.tag == 0x30 else { throw unsupported("not a DER SEQUENCE, a PEM block or X9.63 bytes") }
        let fields = try sequence.children()
        guard fields.count >= 2, fields[0].tag == 0x02 else { throw unsupported("unknown key structure") }
        if fields.count >= 3, fields[1].tag == 0x30, fields[2].tag == 0x04 {
            return try pkcs8(fields)
        }
        if fields.count >= 9, fields.allSatisfy({ $0.tag == 0x02 }) {
            return try pkcs1(der: DER.encode(tag: 0x30, sequence.content), fields: fields)
        }
        if fields[0].content == [1], fields[1].tag == 0x04 {
            return try sec1(fields, knownBits: nil)
        }
        throw unsupported("unknown key structure")
    }

    private static func pkcs8(_ fields: [DER.Element]) throws(CommandError) -> PrivateKeyFile {
        let algorithm = try fields[1].children()
        guard let oid = algorithm.first, oid.tag == 0x06 else { throw unsupported("PKCS #8 without an algorithm") }
        switch DER.objectIdentifier(oid.content) {
        case "1.2.840.113549.1.1.1":
            let inner = try DER.single(fields[2].content)
            return try pkcs1(der: fields[2].content, fields: try inner.children())
        case "1.2.840.10045.2.1":
            let curve = algorithm.count > 1 && algorithm[1].tag == 0x06 ? curveBits(algorithm[1].content) : nil
            return try sec1(try DER.single(fields[2].content).children(), knownBits: curve)
        case let other:
            throw unsupported("PKCS #8 key of algorithm \(other) (RSA and EC are read)")
        }
    }

    private static func pkcs1(der: [UInt8], fields: [DER.Element]) throws(CommandError) -> PrivateKeyFile {
        guard fields.count >= 9, fields.allSatisfy({ $0.tag == 0x02 }) else { throw unsupported("bad RSAPrivateKey") }
        let modulus = fields[1].content, exponent = fields[2].content
        let significant = Array(modulus.drop { $0 == 0 })
        guard let top = significant.first else { throw unsupported("RSA modulus is zero") }
        let bits = Int64((significant.count - 1) * 8 + (8 - top.leadingZeroBitCount))
        let publicKey = DER.encode(tag: 0x30, DER.encode(tag: 0x02, modulus) + DER.encode(tag: 0x02, exponent))
        return PrivateKeyFile(keyType: .rsa, sizeInBits: bits, value: der, publicKeyBits: publicKey)
    }

    private static func sec1(_ fields: [DER.Element], knownBits: Int?) throws(CommandError) -> PrivateKeyFile {
        guard fields.count >= 2, fields[0].content == [1], fields[1].tag == 0x04 else { throw unsupported("bad ECPrivateKey") }
        var bits = knownBits
        var publicKey: [UInt8]?
        for field in fields.dropFirst(2) {
            let inner = try field.children()
            if field.tag == 0xA0, let oid = inner.first, oid.tag == 0x06 { bits = curveBits(oid.content) ?? bits }
            if field.tag == 0xA1, let bitString = inner.first, bitString.tag == 0x03, bitString.content.first == 0 {
                publicKey = Array(bitString.content.dropFirst())
            }
        }
        guard let publicKey, publicKey.first == 0x04, publicKey.count % 2 == 1 else {
            throw unsupported("the EC key carries no uncompressed public key (kcf does no curve arithmetic to compute it)")
        }
        let coordinate = (publicKey.count - 1) / 2
        let scalar = Array(fields[1].content.drop { $0 == 0 })
        guard scalar.count <= coordinate else { throw unsupported("EC private scalar longer than the curve") }
        let padded = [UInt8](repeating: 0, count: coordinate - scalar.count) + scalar
        return PrivateKeyFile(keyType: .ellipticCurve, sizeInBits: Int64(bits ?? bitsFor(coordinate: coordinate)),
                              value: publicKey + padded, publicKeyBits: publicKey)
    }

    private static func x963(_ bytes: [UInt8]) throws(CommandError) -> PrivateKeyFile {
        for coordinate in [32, 48, 66] where bytes.count == 1 + 3 * coordinate {
            return PrivateKeyFile(keyType: .ellipticCurve, sizeInBits: Int64(bitsFor(coordinate: coordinate)),
                                  value: bytes, publicKeyBits: Array(bytes[...(2 * coordinate)]))
        }
        throw unsupported("X9.63 private key of \(bytes.count) bytes (P-256, P-384 and P-521 are read)")
    }

    private static func curveBits(_ oid: [UInt8]) -> Int? {
        switch DER.objectIdentifier(oid) {
        case "1.2.840.10045.3.1.7": return 256
        case "1.3.132.0.34": return 384
        case "1.3.132.0.35": return 521
        default: return nil
        }
    }

    private static func bitsFor(coordinate: Int) -> Int { coordinate == 66 ? 521 : coordinate * 8 }

    private static func unsupported(_ what: String) -> CommandError {
        .failure("private key: \(what)", .invalidParameter)
    }
}
