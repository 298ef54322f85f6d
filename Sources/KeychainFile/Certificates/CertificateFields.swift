import KeychainCrypto

/// The fields of an X.509 certificate (RFC 5280 §4.1) that the keychain stores as attributes, read from
/// its DER.
///
/// The whole certificate is checked to be well-formed DER (see ``DERReader``), with nothing after it;
/// the fields are then taken from their places in `tbsCertificate`. Signatures, validity dates and the
/// meaning of names are not examined: the keychain stores certificates, it does not trust them.
///
/// For example:
/// ```swift
/// let fields = try CertificateFields(der: der)
/// print(fields.version, fields.serialNumber, fields.publicKeyHash)
/// ```
struct CertificateFields: Sendable, Equatable {
    /// The X.509 version: 1, 2 or 3.
    let version: Int
    /// The content octets of the serialNumber INTEGER, leading 0x00 included when present.
    let serialNumber: [UInt8]
    /// The whole DER of the issuer Name, tag and length included.
    let issuer: [UInt8]
    /// The whole DER of the subject Name, tag and length included.
    let subject: [UInt8]
    /// The subjectPublicKey BIT STRING contents without the leading unused-bits byte.
    let subjectPublicKeyBits: [UInt8]
    /// The key identifier of the subject key identifier extension (2.5.29.14), when there is one.
    let subjectKeyIdentifier: [UInt8]?

    /// SHA-1 of ``subjectPublicKeyBits``: Apple's public key hash (SPEC.md §8.2).
    var publicKeyHash: [UInt8] {
        Array(Insecure.SHA1.hash(data: subjectPublicKeyBits))
    }

    /// Reads the fields of the DER-encoded certificate `der`.
    ///
    /// - Parameter der: One DER-encoded certificate and nothing else.
    /// - Throws: `KeychainError.invalidParameter("certificate: <what> at byte <n>")` when the bytes are not
    ///   well-formed DER, are nested more than 32 deep, have bytes after the certificate, or do not have
    ///   the structure of RFC 5280 §4.1 where these fields are read.
    init(der: [UInt8]) throws(KeychainError) {
        do {
            self = try CertificateFields(parsing: der)
        } catch {
            throw .invalidParameter("certificate: \(error.reason) at byte \(error.offset)")
        }
    }

    private init(parsing der: [UInt8]) throws(DERError) {
        var top = DERReader(der)
        let certificate = try top.readElement(tag: 0x30, "Certificate SEQUENCE")
        guard top.isAtEnd else {
            throw DERError(
                offset: top.position, reason: "\(der.count - top.position) trailing bytes after the certificate")
        }
        try top.validateTree(of: certificate)

        var outer = try top.reader(into: certificate)
        let tbs = try outer.readElement(tag: 0x30, "tbsCertificate SEQUENCE")
        _ = try outer.readElement(tag: 0x30, "signatureAlgorithm SEQUENCE")
        _ = try outer.readElement(tag: 0x03, "signatureValue BIT STRING")
        try outer.expectEnd("the certificate")

        var fields = try outer.reader(into: tbs)
        version = try Self.readVersion(&fields)
        let serial = try fields.readElement(tag: 0x02, "serialNumber INTEGER")
        guard serial.end > serial.contentStart else {
            throw DERError(offset: serial.start, reason: "empty serialNumber INTEGER")
        }
        serialNumber = fields.content(of: serial)
        _ = try fields.readElement(tag: 0x30, "signature AlgorithmIdentifier")
        issuer = fields.encoding(of: try fields.readElement(tag: 0x30, "issuer Name"))
        _ = try fields.readElement(tag: 0x30, "validity SEQUENCE")
        subject = fields.encoding(of: try fields.readElement(tag: 0x30, "subject Name"))
        subjectPublicKeyBits = try Self.readPublicKey(&fields)
        for (tag, name) in [(UInt8(0x81), "issuerUniqueID"), (0x82, "subjectUniqueID")] where fields.peekTag() == tag {
            guard version >= 2 else {
                throw DERError(offset: fields.position, reason: "\(name) in a version \(version) certificate")
            }
            _ = try fields.readElement(name)
        }
        if fields.peekTag() == 0xa3 {
            guard version == 3 else {
                throw DERError(offset: fields.position, reason: "extensions in a version \(version) certificate")
            }
            subjectKeyIdentifier = try Self.readSubjectKeyIdentifier(&fields)
        } else {
            subjectKeyIdentifier = nil
        }
        try fields.expectEnd("tbsCertificate")
    }

    /// Reads `version [0] EXPLICIT INTEGER DEFAULT v1` and returns 1, 2 or 3.
    private static func readVersion(_ fields: inout DERReader) throws(DERError) -> Int {
        guard fields.peekTag() == 0xa0 else { return 1 }
        let explicit = try fields.readElement(tag: 0xa0, "version [0]")
        var inner = try fields.reader(into: explicit)
        let integer = try inner.readElement(tag: 0x02, "version INTEGER")
        try inner.expectEnd("version [0]")
        let content = inner.content(of: integer)
        guard content.count == 1, content[0] <= 2 else {
            throw DERError(offset: integer.start, reason: "unsupported version (INTEGER 0x\(HexText.lowercase(content)))")
        }
        return Int(content[0]) + 1
    }

    /// Reads `subjectPublicKeyInfo` and returns the key bits, which must be whole bytes.
    private static func readPublicKey(_ fields: inout DERReader) throws(DERError) -> [UInt8] {
        let info = try fields.readElement(tag: 0x30, "subjectPublicKeyInfo SEQUENCE")
        var inner = try fields.reader(into: info)
        _ = try inner.readElement(tag: 0x30, "subjectPublicKeyInfo algorithm")
        let bits = try inner.readElement(tag: 0x03, "subjectPublicKey BIT STRING")
        try inner.expectEnd("subjectPublicKeyInfo")
        let content = inner.content(of: bits)
        guard let unusedBits = content.first else {
            throw DERError(offset: bits.start, reason: "empty subjectPublicKey BIT STRING")
        }
        guard unusedBits == 0 else {
            throw DERError(
                offset: bits.contentStart, reason: "subjectPublicKey BIT STRING has \(unusedBits) unused bits")
        }
        return Array(content.dropFirst())
    }

    /// Reads `extensions [3] EXPLICIT SEQUENCE SIZE (1..MAX) OF Extension` and returns the key identifier
    /// of the subject key identifier extension, if present.
    private static func readSubjectKeyIdentifier(_ fields: inout DERReader) throws(DERError) -> [UInt8]? {
        let explicit = try fields.readElement(tag: 0xa3, "extensions [3]")
        var wrapper = try fields.reader(into: explicit)
        let sequence = try wrapper.readElement(tag: 0x30, "Extensions SEQUENCE")
        try wrapper.expectEnd("extensions [3]")
        var list = try wrapper.reader(into: sequence)
        guard !list.isAtEnd else { throw DERError(offset: sequence.start, reason: "empty Extensions SEQUENCE") }
        var identifier: [UInt8]?
        while !list.isAtEnd {
            let element = try list.readElement(tag: 0x30, "Extension SEQUENCE")
            var fieldsOfExtension = try list.reader(into: element)
            let oid = try fieldsOfExtension.readElement(tag: 0x06, "extnID OBJECT IDENTIFIER")
            if fieldsOfExtension.peekTag() == 0x01 {
                let critical = try fieldsOfExtension.readElement(tag: 0x01, "critical BOOLEAN")
                guard critical.end - critical.contentStart == 1 else {
                    throw DERError(offset: critical.start, reason: "critical BOOLEAN is not one byte")
                }
            }
            let value = try fieldsOfExtension.readElement(tag: 0x04, "extnValue OCTET STRING")
            try fieldsOfExtension.expectEnd("Extension")
            guard fieldsOfExtension.content(of: oid) == subjectKeyIdentifierOID else { continue }
            guard identifier == nil else {
                throw DERError(offset: element.start, reason: "second subject key identifier extension")
            }
            var inner = try fieldsOfExtension.reader(into: value)
            let keyIdentifier = try inner.readElement(tag: 0x04, "subject key identifier OCTET STRING")
            try inner.expectEnd("subject key identifier extnValue")
            identifier = inner.content(of: keyIdentifier)
        }
        return identifier
    }

    /// The content octets of OBJECT IDENTIFIER 2.5.29.14, id-ce-subjectKeyIdentifier.
    private static let subjectKeyIdentifierOID: [UInt8] = [0x55, 0x1d, 0x0e]
}
