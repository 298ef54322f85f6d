import Foundation
import Testing
@testable import KeychainFile

@Suite("Queries: validation and matching")
struct QueryTests {
    private let mail: ItemAttributes
    private let synced: ItemAttributes
    private let web: ItemAttributes

    init() throws {
        mail = try GenericPassword(service: "mail", account: "ann", label: "Mail").attributes
            .setting(.creationDate, to: .date(milliseconds: 1_767_225_600_123))
        synced = try GenericPassword(service: "mail", account: "ann", synchronizable: true).attributes
        web = try InternetPassword(server: "example.com", account: "ann", protocolType: .https, port: 443).attributes
    }

    @Test("Defaults: class given, no attributes, synchronizable .no, all matches, attributes returned")
    func defaults() {
        let query = Query(.key)
        #expect(query.itemClass == .key)
        #expect(query.attributes.isEmpty)
        #expect(query.synchronizable == .no)
        #expect(query.persistentReference == nil)
        #expect(query.limit == .all)
        #expect(query.returning == [.attributes])
    }

    @Test("validate accepts the class's attributes and refuses others, wrong types, bad values and synchronizable")
    func validate() throws {
        try Query.genericPassword(service: "s", account: "a", accessGroup: "g", label: "l").validate()
        try Query.internetPassword(server: "s", account: "a", securityDomain: "d", protocolType: .ftp,
                                   authenticationType: .ntlm, port: 21, path: "/", accessGroup: "g").validate()
        try Query.certificate(issuer: [0x30, 0x00], serialNumber: [1], subject: [0x30, 0x00], label: "c").validate()
        try Query.key(keyClass: .privateKey, applicationLabel: [1], applicationTag: [2], keyType: .rsa).validate()
        // An identity query takes certificate and key attributes.
        try Query(.identity, attributes: [.subject: .bytes([]), .applicationTag: .bytes([]), .label: .string("x")]).validate()

        expectInvalidParameter("server", "generic password") {
            try Query(.genericPassword, attributes: [.server: .string("x")]).validate()
        }
        expectInvalidParameter("service", "identity") {
            try Query(.identity, attributes: [.service: .string("x")]).validate()
        }
        expectInvalidParameter("port", "expected type integer") {
            try Query(.internetPassword, attributes: [.port: .string("443")]).validate()
        }
        expectInvalidParameter("accessible", "outside") {
            try Query(.key, attributes: [.accessible: .integer(0)]).validate()
        }
        expectInvalidParameter("synchronizable", "Query.synchronizable") {
            try Query(.key, attributes: [.synchronizable: .boolean(true)]).validate()
        }
    }

    @Test("Every given attribute must be equal; others match anything")
    func exactMatching() throws {
        #expect(Query(.genericPassword).matches(mail))
        #expect(Query.genericPassword(service: "mail").matches(mail))
        #expect(Query.genericPassword(service: "mail", account: "ann").matches(mail))
        #expect(Query.genericPassword(label: "Mail").matches(mail))
        #expect(!Query.genericPassword(service: "mail", account: "bob").matches(mail))
        #expect(!Query.genericPassword(service: "Mail").matches(mail))  // case matters
        #expect(!Query.genericPassword(service: "mai").matches(mail))  // no prefix matching
        #expect(!Query.genericPassword(label: "Other").matches(mail))
        // An attribute the item does not have and the file does not default matches no value.
        #expect(!Query(.genericPassword, attributes: [.comment: .string("")]).matches(mail))
        // One the file always stores matches its default when absent.
        let bare = try ItemAttributes(itemClass: .genericPassword, values: [.service: .string("mail")])
        #expect(Query.genericPassword(account: "").matches(bare))
        #expect(Query(.genericPassword, attributes: [.accessible: .integer(1)]).matches(bare))
        #expect(!Query.genericPassword(account: "ann").matches(bare))
    }

    @Test("Strings match byte for byte: a decomposed accent does not find a precomposed one")
    func byteExactStrings() {
        let precomposed = Query.genericPassword(service: "caf\u{e9}")
        let decomposed = Query.genericPassword(service: "cafe\u{301}")
        let item = try? GenericPassword(service: "caf\u{e9}").attributes
        #expect(item.map(precomposed.matches) == true)
        #expect(item.map(decomposed.matches) == false)
    }

    @Test("Dates match to the millisecond")
    func dates() {
        let sameMillisecond = Date(timeIntervalSince1970: 1_767_225_600.1234)
        let nextMillisecond = Date(timeIntervalSince1970: 1_767_225_600.124)
        #expect(Query(.genericPassword, attributes: [.creationDate: .date(sameMillisecond)]).matches(mail))
        #expect(!Query(.genericPassword, attributes: [.creationDate: .date(nextMillisecond)]).matches(mail))
    }

    @Test("synchronizable: .no finds only unsynchronised items, .yes only synchronised ones, .any both")
    func synchronizableRule() throws {
        var query = Query.genericPassword(service: "mail")
        #expect(query.matches(mail) && !query.matches(synced))
        query.synchronizable = .yes
        #expect(!query.matches(mail) && query.matches(synced))
        query.synchronizable = .any
        #expect(query.matches(mail) && query.matches(synced))
        // Absent synchronizable counts as false.
        let bare = try ItemAttributes(itemClass: .genericPassword)
        #expect(Query(.genericPassword).matches(bare))
        #expect(!Query(.genericPassword, synchronizable: .yes).matches(bare))
    }

    @Test("The item's class must be the query's")
    func classMustMatch() throws {
        #expect(!Query(.internetPassword).matches(mail))
        #expect(Query(.internetPassword).matches(web))
        #expect(!Query(.genericPassword, attributes: [.account: .string("ann")]).matches(web))
        #expect(Query(.internetPassword, attributes: [.account: .string("ann"), .port: .integer(443)]).matches(web))
        #expect(Query.internetPassword(protocolType: .https).matches(web))
        #expect(!Query.internetPassword(protocolType: .http).matches(web))
        #expect(!Query(.identity).matches(mail))
    }

    @Test("Identities: a certificate and its private key pair up and match together")
    func identities() throws {
        let der = try TestFixtures.bytes("certificates/rsa2048-ca-v3-ski.der")
        var certificate = try Certificate(der: der)
        certificate.label = "Root"
        let key = Key(keyClass: .privateKey, applicationTag: [7], keyType: .rsa, label: "Root key")
        let identity = try Identity(certificate: certificate, privateKey: key)
        let certificateAttributes = try identity.certificate.attributes
        let keyAttributes = try identity.privateKey.attributes
        let query = Query(.identity)
        #expect(query.matches(certificateAttributes) && query.matches(keyAttributes))
        #expect(query.matchesIdentity(certificate: certificateAttributes, privateKey: keyAttributes))
        // Certificate attributes apply to the certificate, key attributes to the key, shared ones to the certificate.
        #expect(Query(.identity, attributes: [.label: .string("Root"), .applicationTag: .bytes([7])])
            .matchesIdentity(certificate: certificateAttributes, privateKey: keyAttributes))
        #expect(!Query(.identity, attributes: [.label: .string("Root key")])
            .matchesIdentity(certificate: certificateAttributes, privateKey: keyAttributes))
        #expect(!Query(.identity, attributes: [.applicationTag: .bytes([8])])
            .matchesIdentity(certificate: certificateAttributes, privateKey: keyAttributes))
        // A key with another label, or a public key, does not pair.
        let stranger = try Key(keyClass: .privateKey, applicationLabel: [1]).attributes
        #expect(!query.matchesIdentity(certificate: certificateAttributes, privateKey: stranger))
        let publicHalf = try Key(keyClass: .publicKey, applicationLabel: identity.privateKey.applicationLabel).attributes
        #expect(!query.matchesIdentity(certificate: certificateAttributes, privateKey: publicHalf))
        // Only identity queries pair.
        #expect(!Query(.certificate).matchesIdentity(certificate: certificateAttributes, privateKey: keyAttributes))
    }

    @Test("The helpers set exactly the attributes they are given")
    func helpers() {
        #expect(Query.genericPassword().attributes.isEmpty)
        #expect(Query.genericPassword(service: "s").attributes == [.service: .string("s")])
        #expect(Query.internetPassword(server: "h", port: 8080).attributes == [.server: .string("h"), .port: .integer(8080)])
        #expect(Query.internetPassword(authenticationType: .default).attributes
            == [.authenticationType: .integer(0x6466_6c74)])
        #expect(Query.certificate(serialNumber: [1]).attributes == [.serialNumber: .bytes([1])])
        #expect(Query.key(keyClass: .symmetric).attributes == [.keyClass: .integer(2)])
        #expect(Query.identity(label: "x").attributes == [.label: .string("x")])
        #expect(Query.identity(label: "x").itemClass == .identity)
        #expect(QueryClass.identity.itemClass == nil && QueryClass.key.itemClass == .key)
        let options: ReturnOptions = [.data, .persistentReference]
        #expect(options.contains(.data) && !options.contains(.attributes))
    }
}
