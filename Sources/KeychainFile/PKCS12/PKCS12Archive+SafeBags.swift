extension PKCS12Archive {
    /// Adds the certificates and keys of the SafeContents in the OCTET STRING or SEQUENCE `element`.
    ///
    /// - Parameter context: Where `reader`'s offsets count from, when not the file.
    mutating func readSafeContents(
        _ element: DERReader.Element, in reader: DERReader, password: String, context: String?, budget: PKCS12WorkBudget
    ) throws(PKCS12Error) {
        var bags: [DERReader.Element] = []
        try PKCS12Error.readingDER(context) { () throws(DERError) in
            var contents = try reader.reader(into: element)
            if element.tag == 0x04 {
                contents = try contents.reader(into: try contents.readElement(tag: 0x30, "SafeContents SEQUENCE"))
            }
            while !contents.isAtEnd { bags.append(try contents.readElement(tag: 0x30, "SafeBag")) }
        }
        for bag in bags { try readBag(bag, in: reader, password: password, context: context, budget: budget) }
    }

    private mutating func readBag(
        _ bag: DERReader.Element, in reader: DERReader, password: String, context: String?, budget: PKCS12WorkBudget
    ) throws(PKCS12Error) {
        var bagID: [UInt8] = []
        var value: DERReader.Element?
        var friendlyName: String?
        var localKeyID: [UInt8]?
        try PKCS12Error.readingDER(context) { () throws(DERError) in
            var fields = try reader.reader(into: bag)
            bagID = fields.content(of: try fields.readElement(tag: 0x06, "SafeBag bagId"))
            var wrapper = try fields.reader(into: try fields.readElement(tag: 0xa0, "SafeBag [0] bagValue"))
            value = try wrapper.readElement(tag: 0x30, "bagValue SEQUENCE")
            try wrapper.expectEnd("bagValue")
            if !fields.isAtEnd {
                var attributes = try fields.reader(into: try fields.readElement(tag: 0x31, "bagAttributes SET"))
                while !attributes.isAtEnd {
                    var attribute = try attributes.reader(into: try attributes.readElement(tag: 0x30, "PKCS12Attribute"))
                    let type = attribute.content(of: try attribute.readElement(tag: 0x06, "attribute type"))
                    var values = try attribute.reader(into: try attribute.readElement(tag: 0x31, "attribute values SET"))
                    try attribute.expectEnd("PKCS12Attribute")
                    if type == PKCS12ObjectIdentifier.friendlyName {
                        let name = try values.readElement(tag: 0x1e, "friendlyName BMPString")
                        let units = values.content(of: name)
                        guard units.count % 2 == 0 else {
                            throw DERError(offset: name.start, reason: "a BMPString of \(units.count) bytes (an odd number)")
                        }
                        let utf16 = stride(from: 0, to: units.count, by: 2).map { UInt16(units[$0]) << 8 | UInt16(units[$0 + 1]) }
                        friendlyName = String(decoding: utf16, as: UTF16.self)
                    } else if type == PKCS12ObjectIdentifier.localKeyID {
                        localKeyID = values.content(of: try values.readElement(tag: 0x04, "localKeyId OCTET STRING"))
                    } else {
                        while !values.isAtEnd { _ = try values.readElement("attribute value") }
                    }
                }
            }
            try fields.expectEnd("SafeBag")
        }
        guard let value else { return }
        switch bagID {
        case PKCS12ObjectIdentifier.certBag:
            let der = try PKCS12Error.readingDER(context) { () throws(DERError) -> [UInt8]? in
                var certBag = try reader.reader(into: value)
                let type = certBag.content(of: try certBag.readElement(tag: 0x06, "certId"))
                guard type == PKCS12ObjectIdentifier.x509Certificate else { return nil }
                var wrapper = try certBag.reader(into: try certBag.readElement(tag: 0xa0, "[0] certValue"))
                let octets = wrapper.content(of: try wrapper.readElement(tag: 0x04, "certValue OCTET STRING"))
                try wrapper.expectEnd("certValue")
                try certBag.expectEnd("CertBag")
                return octets
            }
            guard let der else { throw .unsupportedContent("a certificate bag whose certificate is not X.509") }
            certificates.append(PKCS12Certificate(der: der, friendlyName: friendlyName, localKeyID: localKeyID))
        case PKCS12ObjectIdentifier.keyBag:
            let pkcs8 = try PKCS12Error.readingDER(context) { () throws(DERError) in
                try reader.validateTree(of: value)
                return reader.encoding(of: value)
            }
            privateKeys.append(PKCS12PrivateKey(pkcs8: pkcs8, friendlyName: friendlyName, localKeyID: localKeyID))
        case PKCS12ObjectIdentifier.pkcs8ShroudedKeyBag:
            var algorithm: DERReader.Element?
            var ciphertext: [UInt8] = []
            try PKCS12Error.readingDER(context) { () throws(DERError) in
                var info = try reader.reader(into: value)
                algorithm = try info.readElement(tag: 0x30, "EncryptedPrivateKeyInfo encryptionAlgorithm")
                ciphertext = info.content(of: try info.readElement(tag: 0x04, "EncryptedPrivateKeyInfo encryptedData"))
                try info.expectEnd("EncryptedPrivateKeyInfo")
            }
            guard let algorithm else { return }
            let parameters = try PKCS12ContentEncryption(algorithm: algorithm, in: reader, context: context)
            let number = privateKeys.count + 1
            try budget.charge(parameters.derivationRounds)
            let plaintext = try parameters.decrypt(ciphertext, password: password, what: "private key \(number)")
            // Plaintext that is not a PrivateKeyInfo is what a wrong password gives when its padding happens to
            // check (about 1 in 256; only a file without a MAC gets this far with one): it did not decrypt.
            do throws(DERError) {
                var keyReader = DERReader(plaintext)
                let key = try keyReader.readElement(tag: 0x30, "PrivateKeyInfo SEQUENCE")
                try keyReader.expectEnd("the decrypted private key")
                try keyReader.validateTree(of: key)
            } catch {
                throw .decryptionFailed("private key \(number)")
            }
            privateKeys.append(PKCS12PrivateKey(pkcs8: plaintext, friendlyName: friendlyName, localKeyID: localKeyID))
        default:
            throw .unsupportedContent(PKCS12ObjectIdentifier.describe(bagID) + " (certificate and private key bags are read)")
        }
    }
}
