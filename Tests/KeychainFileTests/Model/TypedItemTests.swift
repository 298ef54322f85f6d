import Foundation
import Testing
@testable import KeychainFile

@Suite("Typed items: GenericPassword, InternetPassword, Certificate, Key, Identity")
struct TypedItemTests {
    /// Sets the dates the way a writer does (through attributes) and reads the item back.
    private func stamped<Item: KeychainItem>(_ item: Item, created: Int64, modified: Int64) throws -> Item {
        let attributes = try item.attributes
            .setting(.creationDate, to: .date(milliseconds: created))
            .setting(.modificationDate, to: .date(milliseconds: modified))
        return try Item(attributes: attributes, value: item.value)
    }

    /// Item → attributes → plaintext → attributes → item, as a store and a reopen would do.
    private func throughFile<Item: KeychainItem>(_ item: Item) throws -> Item {
        let plaintext = AttributeCoding.encode(id: sequentialID, attributes: try item.attributes)
        let decoded = try plaintext.withUnsafeBytes { try AttributeCoding.decode($0) }
        return try Item(attributes: decoded.attributes, value: item.value)
    }

    @Test("A generic password with every field set round-trips through attributes and the file encoding")
    func genericPassword() throws {
        let item = try stamped(GenericPassword(
            service: "mail.example.com", account: "ann", accessGroup: "team", accessible: .afterFirstUnlockThisDeviceOnly,
            synchronizable: true, label: "Mail", generic: [0, 1, 2], itemDescription: "IMAP password",
            comment: "rotated monthly", creator: 0x6d61_696c, itemType: 0xffff_ffff, isInvisible: true, isNegative: false,
            value: Array("s3cret".utf8)), created: 1_767_225_600_000, modified: 1_767_225_600_001)
        let attributes = try item.attributes
        #expect(attributes.count == 15)
        #expect(attributes[.service] == .string("mail.example.com"))
        #expect(attributes[.accessible] == .integer(6))
        #expect(attributes[.creator] == .integer(0x6d61_696c))
        #expect(attributes[.itemType] == .integer(0xffff_ffff))
        #expect(attributes[.itemDescription] == .string("IMAP password"))
        #expect(item.creationDate == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(item.modificationDate == Date(timeIntervalSince1970: 1_767_225_600.001))
        #expect(try GenericPassword(attributes: attributes, value: item.value) == item)
        #expect(try throughFile(item) == item)
        #expect(item.passwordString == "s3cret")
    }

    @Test("A generic password with only defaults stores the required attributes and reads back equal")
    func genericPasswordDefaults() throws {
        let item = GenericPassword()
        let attributes = try item.attributes
        #expect(Set(attributes.map(\.attribute)) == [.accessGroup, .accessible, .synchronizable, .account, .service])
        #expect(attributes[.account] == .string(""))
        let back = try GenericPassword(attributes: attributes, value: nil)
        #expect(back == item)
        #expect(back.label == nil && back.creator == nil && back.creationDate == nil && back.value == nil)
        // Absent primary-key attributes read as their defaults.
        let bare = try GenericPassword(attributes: try ItemAttributes(itemClass: .genericPassword), value: nil)
        #expect(bare == item)
    }

    @Test("The password convenience stores UTF-8, and passwordString reads and writes it")
    func passwordString() throws {
        var item = GenericPassword(service: "s", account: "a", password: "pässwörd", label: "L")
        #expect(item.value == Array("pässwörd".utf8))
        #expect(item.label == "L")
        item.passwordString = "new"
        #expect(item.value == [0x6e, 0x65, 0x77])
        item.value = [0xff, 0xfe]
        #expect(item.passwordString == nil)  // not UTF-8
        item.passwordString = nil
        #expect(item.value == nil)
    }

    @Test("An internet password with every field set round-trips")
    func internetPassword() throws {
        let item = try stamped(InternetPassword(
            server: "example.com", account: "ann", securityDomain: "Realm", protocolType: .https,
            authenticationType: .htmlForm, port: 65_535, path: "/login", accessGroup: "g", accessible: .always,
            synchronizable: false, label: "Example", itemDescription: "Web form password", comment: "c",
            creator: 1, itemType: 2, isInvisible: false, isNegative: true, value: [1, 2, 3]),
            created: -5, modified: 0)
        let attributes = try item.attributes
        #expect(attributes.count == 19)
        #expect(attributes[.protocolType] == .integer(0x6874_7073))  // 'htps', SPEC.md §8.2
        #expect(attributes[.authenticationType] == .integer(0x666f_726d))  // 'form'
        #expect(attributes[.port] == .integer(65_535))
        #expect(try InternetPassword(attributes: attributes, value: item.value) == item)
        #expect(try throughFile(item) == item)
        #expect(item.creationDate == Date(timeIntervalSince1970: -0.005))
    }

    @Test("An internet password's defaults are the format's: protocol, authentication type and port 0")
    func internetPasswordDefaults() throws {
        let item = InternetPassword(server: "example.com", account: "ann", password: "pw")
        let attributes = try item.attributes
        #expect(attributes[.protocolType] == .integer(0))
        #expect(attributes[.authenticationType] == .integer(0))
        #expect(attributes[.port] == .integer(0))
        #expect(attributes[.path] == .string(""))
        #expect(attributes[.securityDomain] == .string(""))
        #expect(item.passwordString == "pw")
        #expect(try InternetPassword(attributes: attributes, value: item.value) == item)
    }

    @Test("A certificate item with every field set round-trips; der aliases value")
    func certificate() throws {
        var item = try stamped(Certificate(
            certificateType: 1, issuer: [0x30, 0x00], serialNumber: [0x00, 0x80], accessGroup: "g",
            accessible: .whenPasscodeSetThisDeviceOnly, synchronizable: true, label: "C", certificateEncoding: 3,
            subject: [0x30, 0x02, 0x31, 0x00], subjectKeyID: [9, 9], publicKeyHash: [UInt8](repeating: 7, count: 20),
            der: [0x30, 0x03, 0x02, 0x01, 0x01]), created: 1, modified: 2)
        let attributes = try item.attributes
        #expect(attributes.count == 13)
        #expect(try Certificate(attributes: attributes, value: item.value) == item)
        #expect(try throughFile(item) == item)
        #expect(item.der == item.value)
        item.der = [1]
        #expect(item.value == [1])
    }

    @Test("A certificate type outside 0…3 is refused when the attributes are built")
    func certificateTypeRange() {
        for type: Int64 in [4, -1] {
            let item = Certificate(certificateType: type, issuer: [], serialNumber: [1])
            expectInvalidParameter("certificateType", "outside 0…3") { _ = try item.attributes }
        }
    }

    @Test("A key with every field set round-trips; effectiveKeySize defaults to keySizeInBits")
    func key() throws {
        let item = try stamped(Key(
            keyClass: .privateKey, applicationLabel: [1, 2], applicationTag: Array("com.example.k".utf8),
            keyType: .ellipticCurve, keySizeInBits: 256, effectiveKeySize: 128, accessGroup: "g",
            accessible: .alwaysThisDeviceOnly, synchronizable: true, label: "K", isPermanent: true, canEncrypt: false,
            canDecrypt: true, canDerive: false, canSign: true, canVerify: false, canWrap: true, canUnwrap: false,
            value: [UInt8](repeating: 0x42, count: 32)), created: 10, modified: 20)
        let attributes = try item.attributes
        #expect(attributes.count == 20)
        #expect(attributes[.keyClass] == .integer(1))
        #expect(attributes[.keyType] == .integer(73))
        #expect(try Key(attributes: attributes, value: item.value) == item)
        #expect(try throughFile(item) == item)

        let rsa = Key(keyClass: .publicKey, keyType: .rsa, keySizeInBits: 2048)
        #expect(rsa.effectiveKeySize == 2048)
        #expect(KeyType.rsa.rawValue == 42)
        #expect(KeyType.ellipticCurve.rawValue == 73)
        #expect(KeyClass.allCases.map(\.rawValue) == [0, 1, 2])
        let bare = try Key(attributes: try ItemAttributes(itemClass: .key), value: nil)
        #expect(bare.keyClass == .publicKey && bare.keyType.rawValue == 0 && bare.effectiveKeySize == 0)
    }

    @Test("Attributes of another class are refused by every typed initialiser")
    func wrongClass() throws {
        let generic = try GenericPassword(service: "s").attributes
        let key = try Key(keyClass: .symmetric).attributes
        expectInvalidParameter("InternetPassword", "internet password", "generic password") {
            _ = try InternetPassword(attributes: generic, value: nil)
        }
        expectInvalidParameter("Certificate") { _ = try Certificate(attributes: generic, value: nil) }
        expectInvalidParameter("Key") { _ = try Key(attributes: generic, value: nil) }
        expectInvalidParameter("GenericPassword", "key") { _ = try GenericPassword(attributes: key, value: nil) }
    }

    @Test("Typed fields over the limits are refused when the attributes are built, naming the field")
    func limits() {
        let long = String(repeating: "x", count: 65_536)
        expectInvalidParameter("service") { _ = try GenericPassword(service: long).attributes }
        expectInvalidParameter("path") { _ = try InternetPassword(path: long).attributes }
        expectInvalidParameter("applicationTag") {
            _ = try Key(keyClass: .symmetric, applicationTag: [UInt8](repeating: 0, count: 65_536)).attributes
        }
    }

    @Test("Apple's protocol and authentication codes, as in SecKeychain.h, read as big-endian four characters")
    func fourCharacterCodes() throws {
        // 'htps' and 'dflt' are the examples of SPEC.md §8.2; the others are the ASCII of Apple's codes.
        #expect(InternetProtocol.https.rawValue == 0x6874_7073)
        #expect(InternetProtocol.ftp.rawValue == 0x6674_7020)  // 'ftp '
        #expect(InternetProtocol.http.rawValue == 0x6874_7470)
        #expect(InternetProtocol.imaps.rawValue == 0x696d_7073)  // 'imps'
        #expect(InternetProtocol.ssh.rawValue == 0x7373_6820)  // 'ssh '
        #expect(InternetProtocol.ldaps.rawValue == 0x6c64_7073)  // 'ldps'
        #expect(InternetProtocol.any.rawValue == 0)
        #expect(InternetAuthenticationType.default.rawValue == 0x6466_6c74)
        #expect(InternetAuthenticationType.httpDigest.rawValue == 0x6874_7464)  // 'httd'
        #expect(InternetAuthenticationType.msn.rawValue == 0x6d73_6e61)  // 'msna'
        #expect(InternetAuthenticationType.any.rawValue == 0)
        #expect(try InternetProtocol(fourCharacterCode: "htps") == .https)
        #expect(try InternetAuthenticationType(fourCharacterCode: "ntlm") == .ntlm)
        #expect(InternetProtocol.smb.description == "smb ")
        #expect(InternetProtocol(rawValue: 1).description == "0x1")
        for bad in ["", "htp", "https", "ht\u{e9}s", "ab\ncd"] {
            expectInvalidParameter("protocol") { _ = try InternetProtocol(fourCharacterCode: bad) }
        }
        expectInvalidParameter("authentication type") { _ = try InternetAuthenticationType(fourCharacterCode: "x") }
    }
}

@Suite("Identity pairing")
struct IdentityPairingTests {
    private func certificate() throws -> Certificate {
        try Certificate(der: TestFixtures.bytes("certificates/ec-p256-leaf-v3-no-ski.der"))
    }

    @Test("An empty application label is set to the certificate's public key hash")
    func fillsLabel() throws {
        let certificate = try certificate()
        let identity = try Identity(certificate: certificate, privateKey: Key(keyClass: .privateKey, keyType: .ellipticCurve))
        let expected = try TestFixtures.json(CertificateExpectation.self, "certificates/ec-p256-leaf-v3-no-ski.json")
        #expect(identity.privateKey.applicationLabel == (try hex(expected.public_key_hash)))
        #expect(identity.certificate == certificate)
    }

    @Test("A matching label is kept; a different one, or a key that is not private, is refused")
    func checks() throws {
        let certificate = try certificate()
        let hash = try #require(certificate.publicKeyHash)
        let matching = try Identity(certificate: certificate, privateKey: Key(keyClass: .privateKey, applicationLabel: hash))
        #expect(matching.privateKey.applicationLabel == hash)
        expectInvalidParameter("applicationLabel") {
            _ = try Identity(certificate: certificate, privateKey: Key(keyClass: .privateKey, applicationLabel: [1]))
        }
        expectInvalidParameter("not private") {
            _ = try Identity(certificate: certificate, privateKey: Key(keyClass: .publicKey))
        }
    }

    @Test("Without a stored hash the hash is computed from the DER; with neither the pairing is refused")
    func missingHash() throws {
        var certificate = try certificate()
        let hash = certificate.publicKeyHash
        certificate.publicKeyHash = nil
        let identity = try Identity(certificate: certificate, privateKey: Key(keyClass: .privateKey))
        #expect(identity.privateKey.applicationLabel == hash)
        certificate.der = nil
        expectInvalidParameter("no public key hash") {
            _ = try Identity(certificate: certificate, privateKey: Key(keyClass: .privateKey))
        }
    }
}
