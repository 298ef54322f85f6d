/// The object identifiers of PKCS #12 (RFC 7292), PKCS #5 (RFC 8018), PKCS #7 and PKCS #9, as the content
/// octets of their DER encoding, and their names for error messages.
enum PKCS12ObjectIdentifier {
    private static let pkcs: [UInt8] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d]              // 1.2.840.113549
    private static let nistAlgorithms: [UInt8] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04] // 2.16.840.1.101.3.4

    static let data = pkcs + [0x01, 0x07, 0x01]
    static let signedData = pkcs + [0x01, 0x07, 0x02]
    static let envelopedData = pkcs + [0x01, 0x07, 0x03]
    static let encryptedData = pkcs + [0x01, 0x07, 0x06]

    static let keyBag = pkcs + [0x01, 0x0c, 0x0a, 0x01, 0x01]
    static let pkcs8ShroudedKeyBag = pkcs + [0x01, 0x0c, 0x0a, 0x01, 0x02]
    static let certBag = pkcs + [0x01, 0x0c, 0x0a, 0x01, 0x03]
    static let x509Certificate = pkcs + [0x01, 0x09, 0x16, 0x01]
    static let friendlyName = pkcs + [0x01, 0x09, 0x14]
    static let localKeyID = pkcs + [0x01, 0x09, 0x15]

    static let pbes2 = pkcs + [0x01, 0x05, 0x0d]
    static let pbkdf2 = pkcs + [0x01, 0x05, 0x0c]
    static let hmacWithSHA1 = pkcs + [0x02, 0x07]
    static let hmacWithSHA256 = pkcs + [0x02, 0x09]
    static let aes128CBC = nistAlgorithms + [0x01, 0x02]
    static let aes192CBC = nistAlgorithms + [0x01, 0x16]
    static let aes256CBC = nistAlgorithms + [0x01, 0x2a]
    static let sha256 = nistAlgorithms + [0x02, 0x01]
    static let sha1: [UInt8] = [0x2b, 0x0e, 0x03, 0x02, 0x1a]
    static let desEDE3CBC = pkcs + [0x03, 0x07]

    static let pbeWithSHAAnd3KeyTripleDESCBC = pkcs + [0x01, 0x0c, 0x01, 0x03]
    static let pbeWithSHAAnd2KeyTripleDESCBC = pkcs + [0x01, 0x0c, 0x01, 0x04]
    static let pbeWithSHAAnd128BitRC2CBC = pkcs + [0x01, 0x0c, 0x01, 0x05]
    static let pbeWithSHAAnd40BitRC2CBC = pkcs + [0x01, 0x0c, 0x01, 0x06]

    /// Names of identifiers that may appear where this reader expects others, so that a refusal says which
    /// algorithm or content it met.
    private static let names: [[UInt8]: String] = [
        pkcs + [0x01, 0x0c, 0x01, 0x01]: "pbeWithSHAAnd128BitRC4",
        pkcs + [0x01, 0x0c, 0x01, 0x02]: "pbeWithSHAAnd40BitRC4",
        pkcs + [0x01, 0x0c, 0x01, 0x03]: "pbeWithSHAAnd3-KeyTripleDES-CBC",
        pkcs + [0x01, 0x0c, 0x01, 0x04]: "pbeWithSHAAnd2-KeyTripleDES-CBC",
        pkcs + [0x01, 0x0c, 0x01, 0x05]: "pbeWithSHAAnd128BitRC2-CBC",
        pkcs + [0x01, 0x0c, 0x01, 0x06]: "pbewithSHAAnd40BitRC2-CBC",
        pkcs + [0x01, 0x05, 0x03]: "pbeWithMD5AndDES-CBC",
        pkcs + [0x01, 0x05, 0x0a]: "pbeWithSHA1AndDES-CBC",
        pkcs + [0x01, 0x0c, 0x0a, 0x01, 0x04]: "crlBag",
        pkcs + [0x01, 0x0c, 0x0a, 0x01, 0x05]: "secretBag",
        pkcs + [0x01, 0x0c, 0x0a, 0x01, 0x06]: "safeContentsBag",
        pkcs + [0x01, 0x09, 0x16, 0x02]: "sdsiCertificate",
        signedData: "signedData", envelopedData: "envelopedData",
        hmacWithSHA1: "hmacWithSHA1", pkcs + [0x02, 0x08]: "hmacWithSHA224", pkcs + [0x02, 0x0a]: "hmacWithSHA384",
        pkcs + [0x02, 0x0b]: "hmacWithSHA512", pkcs + [0x03, 0x07]: "des-ede3-cbc", pkcs + [0x03, 0x02]: "rc2-cbc",
        nistAlgorithms + [0x02, 0x02]: "sha384", nistAlgorithms + [0x02, 0x03]: "sha512",
        nistAlgorithms + [0x02, 0x04]: "sha224", pkcs + [0x02, 0x05]: "md5",
        pkcs + [0x01, 0x05, 0x0e]: "PBMAC1",
        [0x2b, 0x0e, 0x03, 0x02, 0x07]: "des-cbc",
    ]

    /// The name and dotted form of an identifier, such as `pbeWithSHAAnd3-KeyTripleDES-CBC (1.2.840.113549.1.12.1.3)`.
    static func describe(_ content: [UInt8]) -> String {
        let dotted = dottedText(content)
        guard let name = names[content] else { return dotted }
        return "\(name) (\(dotted))"
    }

    /// The dotted text of an identifier's content octets; arcs too large to show become `?`.
    static func dottedText(_ content: [UInt8]) -> String {
        var arcs: [String] = []
        var value: UInt64 = 0
        var overflow = false
        for byte in content {
            if value > UInt64.max >> 7 { overflow = true }
            value = value << 7 | UInt64(byte & 0x7f)
            guard byte & 0x80 == 0 else { continue }
            if arcs.isEmpty {
                let first = min(value / 40, 2)
                arcs.append(String(first))
                arcs.append(overflow ? "?" : String(value - first * 40))
            } else {
                arcs.append(overflow ? "?" : String(value))
            }
            value = 0
            overflow = false
        }
        return arcs.isEmpty ? "(empty)" : arcs.joined(separator: ".")
    }
}
