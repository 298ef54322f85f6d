import Foundation
import KeychainFile
import Testing

/// `--json` on every command that prints items, parsed with JSONSerialization. Expected values come from outside
/// kcf: Apple's names for the codes, Python `cryptography` 48 (`Name.rfc4514_string()`, `not_valid_before_utc`)
/// and coreutils' sha1sum/sha256sum for the certificates, as noted at each.
@Suite("kcf --json: names rather than codes, certificates' names as RFC 4514 text and their validity dates")
struct JSONOutputTests {
    /// Parses stdout as a JSON object.
    static func object(_ result: KcfProcess.Result, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        #expect(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                            sourceLocation: sourceLocation)
    }

    /// The `items` of a listing, checked to belong to the sandbox keychain.
    static func items(_ result: KcfProcess.Result, _ sandbox: KcfSandbox, key: String = "items",
                      sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        let object = try Self.object(result, sourceLocation: sourceLocation)
        #expect(object["keychain"] as? String == sandbox.keychain, sourceLocation: sourceLocation)
        return try #require(object[key] as? [[String: Any]], sourceLocation: sourceLocation)
    }

    static func attributes(_ item: [String: Any]) throws -> [String: Any] {
        try #require(item["attributes"] as? [String: Any])
    }

    /// A self-signed EC P-256 certificate made with Python `cryptography` 48 (key from a fixed scalar, a published
    /// test key) to exercise RFC 4514's escapes and both time types: subject and issuer
    /// DC=example / O="#hash; <tag>" / OU=" spaced " / emailAddress=ann@example.com / CN=`Ann, "the" +admin\`,
    /// notBefore 1999-12-31 23:59:58 UTC (a UTCTime), notAfter 2051-06-15 12:30:45 UTC (a GeneralizedTime).
    static let escapesCertificate = Data(base64Encoded: """
        MIIB8zCCAZmgAwIBAgIDS0NGMAoGCCqGSM49BAMCMIGAMRcwFQYKCZImiZPyLGQBGRYHZXhhbXBsZTEVMBMGA1UECgwMI2hhc2g7\
        IDx0YWc+MREwDwYDVQQLDAggc3BhY2VkIDEeMBwGCSqGSIb3DQEJARYPYW5uQGV4YW1wbGUuY29tMRswGQYDVQQDDBJBbm4sICJ0\
        aGUiICthZG1pblwwIBcNOTkxMjMxMjM1OTU4WhgPMjA1MTA2MTUxMjMwNDVaMIGAMRcwFQYKCZImiZPyLGQBGRYHZXhhbXBsZTEV\
        MBMGA1UECgwMI2hhc2g7IDx0YWc+MREwDwYDVQQLDAggc3BhY2VkIDEeMBwGCSqGSIb3DQEJARYPYW5uQGV4YW1wbGUuY29tMRsw\
        GQYDVQQDDBJBbm4sICJ0aGUiICthZG1pblwwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQtVcyyik49ngdOTddweOsHyFq79OAX\
        Xh3KNY7BhvJYd7fYADMf/yLItPHqS+kHYC32lNLPXpFgE+QqwUkXvjqIMAoGCCqGSM49BAMCA0gAMEUCIF0nAScbywHy6Lk/tA3N\
        9942f4zqmUcJDMa1sUgq1x0qAiEAmyT9aeQt/rHHFhAOeLI/VGcckfgo2EymMkoJy1r7Jkg=
        """)!
    /// `cryptography`'s rfc4514_string() of its subject, except the emailAddress part: cryptography writes
    /// `1.2.840.113549.1.9.1=ann@example.com`, where RFC 4514 §2.4 asks for `#` and the hex of the value's BER
    /// for a type in dotted form: IA5String (16), length 15 (0f), then the ASCII of ann@example.com.
    static let escapesSubject = ##"CN=Ann\, \"the\" \+admin\\,1.2.840.113549.1.9.1=#160f616e6e406578616d706c652e636f6d,OU=\ spaced\ ,O=\#hash\; \<tag\>,DC=example"##

    @Test("find-generic-password --json: the item with names (class, accessible), its secret only with -g; -w with --json is refused")
    func genericPassword() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "s3cret", extra: ["-l", "Mail"])
        let plain = try Self.items(try sandbox.unlocked(["find-generic-password", "-s", "mail", "--json"]), sandbox)
        #expect(plain.count == 1)
        #expect(plain[0]["class"] as? String == "genericPassword")
        let attributes = try Self.attributes(plain[0])
        #expect(attributes["account"] as? String == "ann")
        #expect(attributes["service"] as? String == "mail")
        #expect(attributes["label"] as? String == "Mail")
        #expect(attributes["accessible"] as? String == "whenUnlocked", "the default, kSecAttrAccessibleWhenUnlocked")
        #expect(plain[0]["secret"] == nil && plain[0]["secretBase64"] == nil)

        let shown = try sandbox.unlocked(["find-generic-password", "-s", "mail", "--json", "-g"])
        let withSecret = try Self.items(shown, sandbox)
        #expect(withSecret[0]["secret"] as? String == "s3cret")
        #expect(withSecret[0]["secretBase64"] as? String == "czNjcmV0", "base64 of s3cret, from base64(1)")
        #expect(shown.stderr.isEmpty, "with --json the secret is in the JSON, not on stderr")

        let refused = try sandbox.unlocked(["find-generic-password", "-s", "mail", "--json", "-w"])
        #expect(refused.status == 2)
        #expect(refused.stdout.isEmpty)
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "nothing", "--json"]).status == 44)
    }

    @Test("find-internet-password --json names the protocol and authentication type; accessible and key names from items the library stored")
    func namesRatherThanCodes() throws {
        let sandbox = try KcfSandbox()
        let keychain = try Keychain.create(at: sandbox.keychain, credential: .password(KcfSandbox.password),
                                           options: .init(passwordIterations: .insecureForTesting(1_000)))
        try keychain.add(InternetPassword(server: "example.com", account: "ann", protocolType: .https, authenticationType: .htmlForm,
                                          port: 443, accessible: .afterFirstUnlock, value: Array("pw".utf8)))
        try keychain.add(Key(keyClass: .symmetric, applicationTag: Array("tag".utf8), keyType: KeyType(rawValue: 0x8000_0001),
                             keySizeInBits: 256, accessible: .alwaysThisDeviceOnly, label: "aes key", value: [UInt8](repeating: 7, count: 32)))
        try keychain.add(Key(keyClass: .publicKey, keyType: .rsa, keySizeInBits: 2048, label: "rsa key", value: [1, 2, 3]))

        let internet = try Self.items(try sandbox.unlocked(["find-internet-password", "-s", "example.com", "--json"]), sandbox)
        let attributes = try Self.attributes(internet[0])
        #expect(internet[0]["class"] as? String == "internetPassword")
        #expect(attributes["protocol"] as? String == "https")
        #expect(attributes["authenticationType"] as? String == "html-form")
        #expect(attributes["accessible"] as? String == "afterFirstUnlock")
        #expect(attributes["port"] as? Int == 443)

        // 0, the value of a protocol or authentication type not given, is Apple's "any" (kSecProtocolTypeAny,
        // kSecAuthenticationTypeAny), which -r and -t take back.
        try keychain.add(InternetPassword(server: "plain.example.com", account: "bob", value: Array("pw".utf8)))
        let plain = try Self.attributes(try Self.items(try sandbox.unlocked(["find-internet-password", "-s", "plain.example.com", "--json"]), sandbox)[0])
        #expect(plain["protocol"] as? String == "any")
        #expect(plain["authenticationType"] as? String == "any")
        #expect(try sandbox.unlocked(["find-internet-password", "-r", "any", "-t", "ANY", "-w"]).stdout == "pw\n")
        #expect(try sandbox.unlocked(["find-internet-password", "-s", "example.com", "-r", "any"]).status == 44)

        let keys = try Self.items(try sandbox.unlocked(["find-key", "-a", "--json"]), sandbox)
        let byLabel = Dictionary(uniqueKeysWithValues: try keys.map { (try Self.attributes($0)["label"] as? String ?? "", try Self.attributes($0)) })
        #expect(byLabel["aes key"]?["keyType"] as? String == "aes", "kSecAttrKeyTypeAES, CSSM_ALGID_AES 0x80000001")
        #expect(byLabel["aes key"]?["keyClass"] as? String == "symmetric")
        #expect(byLabel["aes key"]?["accessible"] as? String == "alwaysThisDeviceOnly")
        #expect(byLabel["aes key"]?["applicationTag"] as? String == "746167", "bytes stay hex: \"tag\"")
        #expect(byLabel["rsa key"]?["keyType"] as? String == "rsa")
        #expect(byLabel["rsa key"]?["keyClass"] as? String == "public")
        #expect(byLabel["rsa key"]?["keySizeInBits"] as? Int == 2048)
        #expect(!keys.contains { $0["secret"] != nil || $0["secretBase64"] != nil }, "find-key never prints key bytes")
    }

    @Test("find-certificate --json: subject and issuer as RFC 4514 text, validity dates, fingerprints; pem with -p")
    func certificates() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let escapes = sandbox.file("escapes.der")
        try Self.escapesCertificate.write(to: URL(fileURLWithPath: escapes))
        for path in [KcfSandbox.fixture("certificates/ec-p256-leaf-v3-no-ski.der"), KcfSandbox.fixture("certificates/rsa2048-v1.der"), escapes] {
            #expect(try sandbox.unlocked(["import", path]).status == 0)
        }
        let all = try Self.items(try sandbox.unlocked(["find-certificate", "-a", "--json"]), sandbox)
        #expect(all.count == 3)
        let bySerial = Dictionary(uniqueKeysWithValues: try all.map { (try Self.attributes($0)["serialNumber"] as? String ?? "", $0) })

        // Fixtures/certificates/ec-p256-leaf-v3-no-ski: its subject has a multi-valued RDN and a UTF-8 value.
        let leaf = try #require(bySerial["5a17c0de0042"])
        #expect(leaf["class"] as? String == "certificate")
        #expect(try Self.attributes(leaf)["subject"] as? String == "CN=leaf.example.com,OU=Keys+O=Zürich Example AG,C=CH")
        #expect(try Self.attributes(leaf)["issuer"] as? String == "CN=KeychainFile Test Root,O=KeychainFile Test CA,C=DE")
        #expect(try Self.attributes(leaf)["certificateType"] as? String == "x509v3")
        #expect(leaf["notBefore"] as? String == "2026-01-01T00:00:00Z")
        #expect(leaf["notAfter"] as? String == "2036-01-01T00:00:00Z")
        #expect(leaf["sha1"] as? String == CertificateAndDemoTests.leafSHA1.lowercased())
        #expect(leaf["sha256"] as? String == "307ac2a4a5d9da258406f44ca659900facb321900716d62655d3c70508fe7788", "sha256sum of the fixture")

        let version1 = try #require(bySerial["01234567"])
        #expect(try Self.attributes(version1)["subject"] as? String == "CN=Version 1,O=KeychainFile")
        #expect(try Self.attributes(version1)["certificateType"] as? String == "x509v1")
        #expect(version1["sha1"] as? String == CertificateAndDemoTests.rsaV1SHA1.lowercased())

        let escaped = try #require(bySerial["4b4346"])
        #expect(try Self.attributes(escaped)["subject"] as? String == Self.escapesSubject)
        #expect(try Self.attributes(escaped)["issuer"] as? String == Self.escapesSubject)
        #expect(escaped["notBefore"] as? String == "1999-12-31T23:59:58Z", "UTCTime 99 is 1999")
        #expect(escaped["notAfter"] as? String == "2051-06-15T12:30:45Z", "a GeneralizedTime")
        #expect(escaped["sha1"] as? String == "a1834935fe90143faf5957f245d449b16a957dbb", "sha1sum of the DER")

        let pem = try Self.items(try sandbox.unlocked(["find-certificate", "-c", "Version", "-p", "--json"]), sandbox)
        let text = try #require(pem[0]["pem"] as? String)
        #expect(text.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        #expect(Data(base64Encoded: body) == (try Data(contentsOf: URL(fileURLWithPath: KcfSandbox.fixture("certificates/rsa2048-v1.der")))))
    }

    @Test("find-identity --json: each identity's SHA-1, name, certificate and private key (no key bytes)")
    func identities() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let keyPath = sandbox.file("leaf-key.pem")
        try Data((CertificateAndDemoTests.leafKeyPKCS8 + "\n").utf8).write(to: URL(fileURLWithPath: keyPath))
        #expect(try sandbox.unlocked(["import", KcfSandbox.fixture("certificates/ec-p256-leaf-v3-no-ski.der")]).status == 0)
        #expect(try sandbox.unlocked(["import", keyPath, "-l", "leaf key"]).status == 0)
        let none = try Self.items(try sandbox.unlocked(["find-identity", "-s", "nobody", "--json"]), sandbox, key: "identities")
        #expect(none.isEmpty)
        let identities = try Self.items(try sandbox.unlocked(["find-identity", "--json"]), sandbox, key: "identities")
        #expect(identities.count == 1)
        let identity = identities[0]
        #expect(identity["sha1"] as? String == CertificateAndDemoTests.leafSHA1.lowercased())
        #expect(identity["name"] as? String == "leaf.example.com")
        let certificate = try #require(identity["certificate"] as? [String: Any])
        #expect(try Self.attributes(certificate)["subject"] as? String == "CN=leaf.example.com,OU=Keys+O=Zürich Example AG,C=CH")
        #expect(certificate["notAfter"] as? String == "2036-01-01T00:00:00Z")
        let key = try #require(identity["privateKey"] as? [String: Any])
        #expect(try Self.attributes(key)["keyType"] as? String == "ec")
        #expect(try Self.attributes(key)["keyClass"] as? String == "private")
        #expect(try Self.attributes(key)["label"] as? String == "leaf key")
        #expect(try Self.attributes(key)["applicationLabel"] as? String == "d9ea6cf4be36caea1960b81f024990ec43244b48",
                "the certificate's public key hash, from ec-p256-leaf-v3-no-ski.json")
        #expect(key["secret"] == nil && key["secretBase64"] == nil)
    }

    /// The report is the same for both format versions; the torn tail (5 bytes cut from the end) is version 1's
    /// alone: version 2's parity mends so short a cut (SPEC.md §25.5).
    @Test("verify --json: result, counts by class, secrets, file sizes; a torn tail (version 1) is result tornTail and exit 3",
          arguments: [1, 2])
    func verify(formatVersion: Int) throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain(formatVersion: formatVersion)
        try sandbox.addGeneric(account: "a", service: "one", secret: "12345")
        try sandbox.addGeneric(account: "a", service: "two", secret: "678")
        #expect(try sandbox.unlocked(["import", KcfSandbox.fixture("certificates/rsa2048-v1.der")]).status == 0)
        let report = try Self.object(try sandbox.unlocked(["verify", "--json"]))
        #expect(report["result"] as? String == "ok")
        #expect(report["keychain"] as? String == sandbox.keychain)
        #expect(report["epoch"] as? Int == 1)
        #expect(report["keySlots"] as? Int == 1)
        #expect((report["head"] as? String)?.hasPrefix("1.3.") == true, "epoch 1, three records")
        let items = try #require(report["items"] as? [String: Any])
        #expect(items["genericPassword"] as? Int == 2 && items["internetPassword"] as? Int == 0)
        #expect(items["certificate"] as? Int == 1 && items["key"] as? Int == 0 && items["identity"] as? Int == 0)
        #expect(items["total"] as? Int == 3)
        let rsaV1Size = try Data(contentsOf: URL(fileURLWithPath: KcfSandbox.fixture("certificates/rsa2048-v1.der"))).count
        let secrets = try #require(report["secrets"] as? [String: Any])
        #expect(secrets["count"] as? Int == 3)
        #expect(secrets["bytes"] as? Int == 5 + 3 + rsaV1Size, "two secrets and the certificate's DER")
        let file = try #require(report["file"] as? [String: Any])
        #expect(file["size"] as? Int == (try sandbox.keychainBytes()).count)
        #expect(report["tornTail"] is NSNull)
        #expect(try Keychain.open(at: sandbox.keychain, credential: .password(KcfSandbox.password)).fileFormatVersion == formatVersion)
        guard formatVersion == 1 else { return }

        let torn = sandbox.file("torn.kcf")
        try Data(try sandbox.keychainBytes().dropLast(5)).write(to: URL(fileURLWithPath: torn))
        let tornResult = try sandbox.unlocked(["verify", "--json", torn])
        #expect(tornResult.status == 3, "\(tornResult.stderr)")
        let tornReport = try #require(try JSONSerialization.jsonObject(with: Data(tornResult.stdout.utf8)) as? [String: Any])
        #expect(tornReport["result"] as? String == "tornTail")
        let tail = try #require(tornReport["tornTail"] as? [String: Any])
        #expect(tail["mayHoldCommittedItems"] as? Bool == false, "a copy without its lock file: nothing says the record was acknowledged")
        #expect((tornReport["items"] as? [String: Any])?["total"] as? Int == 2)
    }

    @Test("dump-keychain --json names classes and values; certificates have their validity without -d, secrets only with -d")
    func dump() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "a", service: "s", secret: "generic-secret")
        #expect(try sandbox.unlocked(["import", KcfSandbox.fixture("certificates/rsa2048-v1.der")]).status == 0)
        let items = try Self.items(try sandbox.unlocked(["dump-keychain", "--json"]), sandbox)
        #expect(items.map { $0["class"] as? String } == ["genericPassword", "certificate"])
        #expect(items[1]["notBefore"] as? String == "2026-01-01T00:00:00Z")
        #expect(items.allSatisfy { $0["secretBase64"] == nil && $0["secret"] == nil })
        let full = try Self.items(try sandbox.unlocked(["dump-keychain", "--json", "-d", "--yes"]), sandbox)
        #expect(full[0]["secret"] as? String == "generic-secret")
        #expect(full[1]["secretBase64"] != nil && full[1]["notAfter"] as? String == "2036-01-01T00:00:00Z")
    }

    @Test("--json to a closed pipe exits 4", arguments: [["find-certificate", "--json"], ["verify", "--json"], ["find-identity", "--json"],
                                                        ["find-generic-password", "-s", "s", "--json"], ["find-key", "--json"]])
    func closedPipe(_ arguments: [String]) throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "a", service: "s", secret: "x")
        let keyPath = sandbox.file("leaf-key.pem")
        try Data((CertificateAndDemoTests.leafKeyPKCS8 + "\n").utf8).write(to: URL(fileURLWithPath: keyPath))
        #expect(try sandbox.unlocked(["import", KcfSandbox.fixture("certificates/ec-p256-leaf-v3-no-ski.der")]).status == 0)
        #expect(try sandbox.unlocked(["import", keyPath]).status == 0)
        let result = try sandbox.run(arguments, stdinBytes: Array((KcfSandbox.password + "\n").utf8), stdout: .brokenPipe)
        #expect(result.status == 4, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains("cannot write to stdout"))
    }
}
