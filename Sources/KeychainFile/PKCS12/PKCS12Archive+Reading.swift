extension PKCS12Archive {
    /// Reads a PKCS #12 file: checks its MAC with `password` first, then decrypts its certificates and keys.
    ///
    /// Every length and offset is checked against the bytes before use, so any input gives either an archive
    /// or an error. A file without a MAC is read too; a wrong password then shows as contents that do not
    /// decrypt.
    ///
    /// For example:
    /// ```swift
    /// let archive = try PKCS12Archive(bytes: Array(fileData), password: "secret")
    /// for certificate in archive.certificates { print(certificate.friendlyName ?? "(no name)") }
    /// ```
    ///
    /// - Parameters:
    ///   - bytes: The whole file (DER; not PEM or base64).
    ///   - password: The file's password (the empty string for none).
    /// - Throws: ``PKCS12Error/wrongPassword`` when the MAC does not verify; ``PKCS12Error/malformed(offset:reason:)``
    ///   when the bytes are not a PKCS #12 file; ``PKCS12Error/unsupportedAlgorithm(_:)`` and
    ///   ``PKCS12Error/unsupportedContent(_:)`` for what this reader does not take (the legacy ciphers among
    ///   them); ``PKCS12Error/iterationCountOutOfRange(_:)``; ``PKCS12Error/decryptionFailed(_:)``.
    public init(bytes: [UInt8], password: String) throws(PKCS12Error) {
        let top = DERReader(bytes)
        var authSafe: DERReader.Element?
        var macData: DERReader.Element?
        var version = 0
        try PKCS12Error.readingDER { () throws(DERError) in
            var whole = top
            let pfx = try whole.readElement(tag: 0x30, "PFX SEQUENCE")
            try whole.expectEnd("the file")
            var fields = try whole.reader(into: pfx)
            version = try fields.readInteger("PFX version", maximum: 1_000)
            authSafe = try fields.readElement(tag: 0x30, "authSafe ContentInfo")
            if !fields.isAtEnd { macData = try fields.readElement(tag: 0x30, "macData") }
            try fields.expectEnd("PFX")
        }
        guard version == 3 else { throw .unsupportedContent("PFX version \(version) (version 3 is read)") }
        guard let authSafe else { throw .malformed(offset: 0, reason: "no authSafe") }
        let (type, content) = try Self.contentInfo(authSafe, in: top, context: nil)
        guard type == PKCS12ObjectIdentifier.data else {
            throw .unsupportedContent("authSafe of type " + PKCS12ObjectIdentifier.describe(type)
                + " (public-key integrity mode); password integrity (data) is read")
        }
        let safe = try Self.octetString(in: content, of: top, "authSafe data", context: nil)
        if let macData {
            try PKCS12MAC(element: macData, in: top).verify(top.content(of: safe), password: password)
        }
        var archive = PKCS12Archive()
        var safeContents: [DERReader.Element] = []
        try PKCS12Error.readingDER { () throws(DERError) in
            var sequence = try top.reader(into: safe)
            var infos = try sequence.reader(into: try sequence.readElement(tag: 0x30, "AuthenticatedSafe SEQUENCE"))
            try sequence.expectEnd("authSafe data")
            while !infos.isAtEnd { safeContents.append(try infos.readElement(tag: 0x30, "ContentInfo")) }
        }
        for (index, info) in safeContents.enumerated() {
            let (type, content) = try Self.contentInfo(info, in: top, context: nil)
            switch type {
            case PKCS12ObjectIdentifier.data:
                let octets = try Self.octetString(in: content, of: top, "SafeContents", context: nil)
                try archive.readSafeContents(octets, in: top, password: password, context: nil)
            case PKCS12ObjectIdentifier.encryptedData:
                let context = "in the decrypted SafeContents \(index + 1)"
                let plaintext = try Self.decryptEncryptedData(content, in: top, password: password, index: index + 1)
                let reader = DERReader(plaintext)
                let whole = try PKCS12Error.readingDER(context) { () throws(DERError) in
                    var copy = reader
                    let element = try copy.readElement(tag: 0x30, "SafeContents SEQUENCE")
                    try copy.expectEnd("the decrypted SafeContents")
                    return element
                }
                try archive.readSafeContents(whole, in: reader, password: password, context: context)
            default:
                throw .unsupportedContent("SafeContents of type " + PKCS12ObjectIdentifier.describe(type))
            }
        }
        self = archive
    }

    /// A ContentInfo's type and its `[0] EXPLICIT` content.
    private static func contentInfo(_ element: DERReader.Element, in reader: DERReader, context: String?)
        throws(PKCS12Error) -> (type: [UInt8], content: DERReader.Element) {
        try PKCS12Error.readingDER(context) { () throws(DERError) in
            var fields = try reader.reader(into: element)
            let type = fields.content(of: try fields.readElement(tag: 0x06, "ContentInfo contentType"))
            let content = try fields.readElement(tag: 0xa0, "ContentInfo [0] content")
            try fields.expectEnd("ContentInfo")
            return (type, content)
        }
    }

    /// The single OCTET STRING inside `element`.
    private static func octetString(in element: DERReader.Element, of reader: DERReader, _ what: String, context: String?)
        throws(PKCS12Error) -> DERReader.Element {
        try PKCS12Error.readingDER(context) { () throws(DERError) in
            var inner = try reader.reader(into: element)
            let octets = try inner.readElement(tag: 0x04, "\(what) OCTET STRING")
            try inner.expectEnd(what)
            return octets
        }
    }

    /// Decrypts the EncryptedData in the `[0]` element `content` (RFC 5652 §8): the SafeContents DER.
    private static func decryptEncryptedData(_ content: DERReader.Element, in reader: DERReader, password: String, index: Int)
        throws(PKCS12Error) -> [UInt8] {
        var algorithm: DERReader.Element?
        var ciphertext: [UInt8] = []
        var innerType: [UInt8] = []
        try PKCS12Error.readingDER { () throws(DERError) in
            var wrapper = try reader.reader(into: content)
            var encryptedData = try wrapper.reader(into: try wrapper.readElement(tag: 0x30, "EncryptedData SEQUENCE"))
            try wrapper.expectEnd("encryptedData content")
            _ = try encryptedData.readInteger("EncryptedData version", maximum: 2)
            var info = try encryptedData.reader(into: try encryptedData.readElement(tag: 0x30, "EncryptedContentInfo"))
            innerType = info.content(of: try info.readElement(tag: 0x06, "EncryptedContentInfo contentType"))
            algorithm = try info.readElement(tag: 0x30, "contentEncryptionAlgorithm")
            ciphertext = info.content(of: try info.readElement(tag: 0x80, "[0] encryptedContent"))
            try info.expectEnd("EncryptedContentInfo")
        }
        guard innerType == PKCS12ObjectIdentifier.data else {
            throw .unsupportedContent("encrypted content of type " + PKCS12ObjectIdentifier.describe(innerType))
        }
        guard let algorithm else { throw .malformed(offset: content.start, reason: "no contentEncryptionAlgorithm") }
        let parameters = try PBES2Parameters(algorithm: algorithm, in: reader)
        return try parameters.decrypt(ciphertext, password: password, what: "SafeContents \(index) (the certificates)")
    }
}
