extension PKCS12Archive {
    /// Reads a PKCS #12 file: checks its MAC with `password` first, then decrypts its certificates and keys.
    ///
    /// Every length and offset is checked against the bytes before use, so any input gives either an archive
    /// or an error. A file without a MAC is read too; a wrong password then shows as contents that do not
    /// decrypt. The legacy ciphers of RFC 7292 Appendix C (Triple-DES and RC2, as macOS, Windows and OpenSSL
    /// 1.x write them) are read, as is BER (indefinite lengths, constructed OCTET STRINGs, as Java keytool and
    /// macOS write): the offsets in an error about a BER file count in its DER re-encoding.
    ///
    /// For example:
    /// ```swift
    /// let archive = try PKCS12Archive(bytes: Array(fileData), password: "secret")
    /// for certificate in archive.certificates { print(certificate.friendlyName ?? "(no name)") }
    /// ```
    ///
    /// - Parameters:
    ///   - bytes: The whole file (DER or BER; not PEM or base64).
    ///   - password: The file's password (the empty string for none).
    /// - Throws: ``PKCS12Error/wrongPassword`` when the MAC does not verify; ``PKCS12Error/malformed(offset:reason:)``
    ///   when the bytes are not a PKCS #12 file; ``PKCS12Error/unsupportedAlgorithm(_:)`` and
    ///   ``PKCS12Error/unsupportedContent(_:)`` for what this reader does not take (RC4 and PKCS #5 v1 DES among
    ///   them); ``PKCS12Error/iterationCountOutOfRange(_:)``; ``PKCS12Error/tooMuchKeyDerivation(rounds:)`` when
    ///   the file's derivations together ask for more than five times the largest iteration count;
    ///   ``PKCS12Error/decryptionFailed(_:)``.
    public init(bytes: [UInt8], password: String) throws(PKCS12Error) {
        try self.init(bytes: bytes, password: password, budget: PKCS12WorkBudget())
    }

    /// Reads as ``init(bytes:password:)`` does, charging every key derivation to `budget` before it runs.
    init(bytes: [UInt8], password: String, budget: PKCS12WorkBudget) throws(PKCS12Error) {
        let top = DERReader(try PKCS12BERDecoder.der(bytes, "the PFX", context: nil))
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
            // The MAC covers the content octets as they are, BER or DER.
            let mac = try PKCS12MAC(element: macData, in: top)
            try budget.charge(mac.iterations)
            try mac.verify(top.content(of: safe), password: password)
        }
        var archive = PKCS12Archive()
        var safeContents: [DERReader.Element] = []
        let (authenticatedSafe, sequence, authContext) = try Self.derContents(of: safe, in: top, "AuthenticatedSafe")
        try PKCS12Error.readingDER(authContext) { () throws(DERError) in
            var infos = try authenticatedSafe.reader(into: sequence)
            while !infos.isAtEnd { safeContents.append(try infos.readElement(tag: 0x30, "ContentInfo")) }
        }
        for (index, info) in safeContents.enumerated() {
            let (type, content) = try Self.contentInfo(info, in: authenticatedSafe, context: authContext)
            switch type {
            case PKCS12ObjectIdentifier.data:
                let octets = try Self.octetString(in: content, of: authenticatedSafe, "SafeContents", context: authContext)
                let (reader, whole, context) = try Self.derContents(of: octets, in: authenticatedSafe, "SafeContents \(index + 1)")
                try archive.readSafeContents(whole, in: reader, password: password, context: context ?? authContext, budget: budget)
            case PKCS12ObjectIdentifier.encryptedData:
                let context = "in the decrypted SafeContents \(index + 1)"
                let plaintext = try Self.decryptEncryptedData(content, in: authenticatedSafe, password: password,
                                                              index: index + 1, context: authContext, budget: budget)
                // Plaintext that is not a SafeContents is what a wrong password gives when its padding happens to
                // check (only a file without a MAC gets this far with one): it did not decrypt.
                let undecrypted = PKCS12Error.decryptionFailed("SafeContents \(index + 1) (the certificates)")
                let reader: DERReader
                let whole: DERReader.Element
                do throws(PKCS12Error) {
                    reader = DERReader(try PKCS12BERDecoder.der(plaintext, "the decrypted SafeContents", context: context))
                    whole = try PKCS12Error.readingDER(context) { () throws(DERError) in
                        var copy = reader
                        let element = try copy.readElement(tag: 0x30, "SafeContents SEQUENCE")
                        try copy.expectEnd("the decrypted SafeContents")
                        return element
                    }
                } catch {
                    throw undecrypted
                }
                try archive.readSafeContents(whole, in: reader, password: password, context: context, budget: budget)
            default:
                throw .unsupportedContent("SafeContents of type " + PKCS12ObjectIdentifier.describe(type))
            }
        }
        self = archive
    }

    /// A reader of the SEQUENCE that the OCTET STRING `octets` of `reader` holds, with the SEQUENCE, and the
    /// context to name in errors: `reader` itself when the contents are DER (offsets stay those of `reader`);
    /// a reader of their DER re-encoding when they are BER (offsets then count in that, as the context says).
    private static func derContents(of octets: DERReader.Element, in reader: DERReader, _ what: String)
        throws(PKCS12Error) -> (reader: DERReader, sequence: DERReader.Element, context: String?) {
        let content = reader.content(of: octets)
        let der = try PKCS12BERDecoder.der(content, what, context: "in \(what) at byte \(octets.contentStart)")
        let isDER = der == content
        let context: String? = isDER ? nil : "in the DER re-encoding of the BER \(what)"
        let contents = isDER ? reader : DERReader(der)
        let sequence = try PKCS12Error.readingDER(context) { () throws(DERError) in
            var window = isDER ? try reader.reader(into: octets) : contents
            let sequence = try window.readElement(tag: 0x30, "\(what) SEQUENCE")
            try window.expectEnd(what)
            return sequence
        }
        return (contents, sequence, context)
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
    ///
    /// The encryptedContent is `[0] IMPLICIT OCTET STRING`: primitive, or constructed of OCTET STRING pieces (BER).
    private static func decryptEncryptedData(_ content: DERReader.Element, in reader: DERReader, password: String, index: Int,
                                             context: String?, budget: PKCS12WorkBudget) throws(PKCS12Error) -> [UInt8] {
        var algorithm: DERReader.Element?
        var ciphertext: [UInt8] = []
        var innerType: [UInt8] = []
        try PKCS12Error.readingDER(context) { () throws(DERError) in
            var wrapper = try reader.reader(into: content)
            var encryptedData = try wrapper.reader(into: try wrapper.readElement(tag: 0x30, "EncryptedData SEQUENCE"))
            try wrapper.expectEnd("encryptedData content")
            _ = try encryptedData.readInteger("EncryptedData version", maximum: 2)
            var info = try encryptedData.reader(into: try encryptedData.readElement(tag: 0x30, "EncryptedContentInfo"))
            innerType = info.content(of: try info.readElement(tag: 0x06, "EncryptedContentInfo contentType"))
            algorithm = try info.readElement(tag: 0x30, "contentEncryptionAlgorithm")
            if info.peekTag() == 0xa0 {
                var pieces = try info.reader(into: try info.readElement(tag: 0xa0, "[0] encryptedContent"))
                while !pieces.isAtEnd { ciphertext += pieces.content(of: try pieces.readElement(tag: 0x04, "encryptedContent OCTET STRING")) }
            } else {
                ciphertext = info.content(of: try info.readElement(tag: 0x80, "[0] encryptedContent"))
            }
            try info.expectEnd("EncryptedContentInfo")
        }
        guard innerType == PKCS12ObjectIdentifier.data else {
            throw .unsupportedContent("encrypted content of type " + PKCS12ObjectIdentifier.describe(innerType))
        }
        guard let algorithm else { throw .malformed(offset: content.start, reason: "no contentEncryptionAlgorithm") }
        let parameters = try PKCS12ContentEncryption(algorithm: algorithm, in: reader, context: context)
        try budget.charge(parameters.derivationRounds)
        return try parameters.decrypt(ciphertext, password: password, what: "SafeContents \(index) (the certificates)")
    }
}
