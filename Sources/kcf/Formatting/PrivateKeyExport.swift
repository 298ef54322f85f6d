import KeychainFile

/// A stored private key as PKCS #8 PrivateKeyInfo DER (RFC 5208), the form `openssl pkey` and most tools read:
/// the inverse of ``PrivateKeyFile``. RSA keys are stored as PKCS #1 RSAPrivateKey, which PKCS #8 wraps; EC keys
/// as X9.63 `04 ‖ X ‖ Y ‖ K`, which becomes an ECPrivateKey (RFC 5915) with its public key and the curve named
/// in the algorithm identifier.
enum PrivateKeyExport {
    /// PKCS #8 DER of the key with these attributes and stored bytes.
    ///
    /// - Throws: `CommandError` (status `.invalidParameter`) for a key that is not private, of another type than
    ///   RSA or EC, on a curve other than P-256, P-384 or P-521, or whose bytes do not have the size its type needs.
    static func pkcs8(attributes: ItemAttributes, value: [UInt8]) throws(CommandError) -> [UInt8] {
        guard case .integer(let keyClass)? = attributes[.keyClass], keyClass == KeyClass.privateKey.rawValue else {
            throw .failure("only private keys are exported (this key's class is not private)", .invalidParameter)
        }
        let keyType: Int64
        if case .integer(let type)? = attributes[.keyType] { keyType = type } else { keyType = 0 }
        switch keyType {
        case KeyType.rsa.rawValue:
            let algorithm = DER.encode(tag: 0x30, DER.encode(tag: 0x06, rsaEncryption) + [0x05, 0x00])
            return DER.encode(tag: 0x30, DER.encode(tag: 0x02, [0x00]) + algorithm + DER.encode(tag: 0x04, value))
        case KeyType.ellipticCurve.rawValue:
            let curves: [Int: (oid: [UInt8], bytes: Int)] = [
                65: (p256, 32), 97: (p384, 48), 133: (p521, 66),
            ]
            // X9.63 private: 1 + 2n + n bytes for a curve of n-byte coordinates.
            guard let curve = curves.first(where: { $0.value.bytes * 3 + 1 == value.count })?.value, value.first == 0x04 else {
                throw .failure("an EC private key of \(value.count) bytes is not X9.63 on P-256, P-384 or P-521", .invalidParameter)
            }
            let publicKey = Array(value[0..<(1 + 2 * curve.bytes)])
            let scalar = Array(value[(1 + 2 * curve.bytes)...])
            let ecPrivateKey = DER.encode(tag: 0x30, DER.encode(tag: 0x02, [0x01]) + DER.encode(tag: 0x04, scalar)
                + DER.encode(tag: 0xA1, DER.encode(tag: 0x03, [0x00] + publicKey)))
            let algorithm = DER.encode(tag: 0x30, DER.encode(tag: 0x06, ecPublicKey) + DER.encode(tag: 0x06, curve.oid))
            return DER.encode(tag: 0x30, DER.encode(tag: 0x02, [0x00]) + algorithm + DER.encode(tag: 0x04, ecPrivateKey))
        default:
            throw .failure("keys of type \(keyType) are not exported (RSA and EC are)", .invalidParameter)
        }
    }

    /// 1.2.840.113549.1.1.1
    private static let rsaEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    /// 1.2.840.10045.2.1
    private static let ecPublicKey: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    /// 1.2.840.10045.3.1.7 (P-256)
    private static let p256: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
    /// 1.3.132.0.34 (P-384)
    private static let p384: [UInt8] = [0x2B, 0x81, 0x04, 0x00, 0x22]
    /// 1.3.132.0.35 (P-521)
    private static let p521: [UInt8] = [0x2B, 0x81, 0x04, 0x00, 0x23]
}
