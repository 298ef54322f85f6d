import Foundation
import Testing

@Suite("kcf: certificates, keys, identities and the demo")
struct CertificateAndDemoTests {
    /// SHA-1 of Fixtures/certificates/rsa2048-v1.der, computed with coreutils' sha1sum (not by kcf).
    static let rsaV1SHA1 = "F57C572BF85599D068F28CA929B7027209387755"

    @Test("import a DER certificate; find-certificate by name, as PEM (the same bytes) and with -Z")
    func importAndFindCertificate() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let path = KcfSandbox.fixture("certificates/rsa2048-v1.der")
        let imported = try sandbox.unlocked(["import", path])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout == "1 certificate imported.\n")
        let again = try sandbox.unlocked(["import", path, "-t", "cert"])
        #expect(again.status == 45)

        let found = try sandbox.unlocked(["find-certificate", "-c", "Version"])
        #expect(found.status == 0, "\(found.stderr)")
        #expect(found.stdout.contains("class: \"cert\""))
        #expect(found.stdout.contains("\"labl\"<blob>=\"Version 1\""), "labelled with the subject's common name")
        #expect(found.stdout.contains("\"ctyp\"<uint32>=0x00000001"), "an X.509 v1 certificate")

        let pem = try sandbox.unlocked(["find-certificate", "-c", "Version", "-p"])
        #expect(pem.status == 0)
        #expect(pem.stdout.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        let body = pem.stdout.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        #expect(Data(base64Encoded: body) == (try Data(contentsOf: URL(fileURLWithPath: path))))

        let hashes = try sandbox.unlocked(["find-certificate", "-Z", "-c", "Version"])
        #expect(hashes.stdout.contains("SHA-1 hash: \(Self.rsaV1SHA1)\n"))
        #expect(try sandbox.unlocked(["find-certificate", "-c", "no such name"]).status == 44)
    }

    @Test("add-certificates adds several; -a lists them all")
    func addCertificates() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let added = try sandbox.unlocked(["add-certificates", KcfSandbox.fixture("certificates/ec-p256-leaf-v3-no-ski.der"),
                                          KcfSandbox.fixture("certificates/rsa2048-ca-v3-ski.der")])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout == "2 certificates imported.\n")
        let all = try sandbox.unlocked(["find-certificate", "-a"])
        #expect(all.stdout.components(separatedBy: "class: \"cert\"").count == 3)
        #expect(try sandbox.unlocked(["find-certificate"]).stdout.components(separatedBy: "class: \"cert\"").count == 2)
        #expect(try sandbox.unlocked(["find-certificate", "-c", "leaf.example"]).stdout.contains("\"labl\"<blob>=\"leaf.example.com\""))
    }

    @Test("a certificate and its PEM private key make an identity; find-key finds the key; junk is refused")
    func identityFromImports() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.unlocked(["find-identity"]).stdout.contains("0 identities found"))
        #expect(try sandbox.unlocked(["import", KcfSandbox.fixture("certificates/rsa2048-v1.der")]).status == 0)
        let key = try sandbox.unlocked(["import", KcfSandbox.fixture("certificates/keys/rsa2048-v1.pem")])
        #expect(key.status == 0, "\(key.stderr)")
        #expect(key.stdout == "1 key imported.\n")

        let identities = try sandbox.unlocked(["find-identity"])
        #expect(identities.status == 0)
        #expect(identities.stdout == "  1) \(Self.rsaV1SHA1) \"Version 1\"\n     1 identities found\n")

        let keys = try sandbox.unlocked(["find-key", "-t", "private"])
        #expect(keys.status == 0, "\(keys.stderr)")
        #expect(keys.stdout.contains("class: \"keys\""))
        #expect(keys.stdout.contains("\"bsiz\"<uint32>=0x00000800"), "a 2048-bit RSA key")
        #expect(try sandbox.unlocked(["find-key", "-t", "symmetric"]).status == 44)

        let junk = sandbox.file("junk.bin")
        try Data("neither a certificate nor a key".utf8).write(to: URL(fileURLWithPath: junk))
        let refused = try sandbox.unlocked(["import", junk])
        #expect(refused.status == 206, "\(refused.stderr)")
    }

    /// The private key of Fixtures/certificates/ec-p256-leaf-v3-no-ski.der, as PKCS #8 and as SEC 1 PEM:
    /// written by Python's `cryptography` from the fixed scalar Fixtures/certificates/generate.py derives
    /// ("ec-p256-leaf"), a published test key.
    static let leafKeyPKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgAAAAAAAAAAAAAAAA
        4myBx9ZuAdtx8O6+v7m/0LsbJJqhRANCAATIXAzjZKyefn4E3XRqoySIjc/dO7xo
        6ncDtkuJt791hFw4HLOAnnySw7K0FnKDAHCDqfQFmNs3soJruS9C/gvb
        -----END PRIVATE KEY-----
        """
    static let leafKeySEC1 = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIAAAAAAAAAAAAAAAAOJsgcfWbgHbcfDuvr+5v9C7GySaoAoGCCqGSM49
        AwEHoUQDQgAEyFwM42Ssnn5+BN10aqMkiI3P3Tu8aOp3A7ZLibe/dYRcOByzgJ58
        ksOytBZygwBwg6n0BZjbN7KCa7kvQv4L2w==
        -----END EC PRIVATE KEY-----
        """
    /// SHA-1 of Fixtures/certificates/ec-p256-leaf-v3-no-ski.der, computed with coreutils' sha1sum.
    static let leafSHA1 = "22C33A0009104C4F148F6C26E6FD40F98ABC9D56"

    @Test("EC private keys, PKCS #8 and SEC 1 PEM, pair with their certificate into an identity", arguments: [leafKeyPKCS8, leafKeySEC1])
    func ellipticCurveIdentity(_ pem: String) throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let keyPath = sandbox.file("leaf-key.pem")
        try Data((pem + "\n").utf8).write(to: URL(fileURLWithPath: keyPath))
        #expect(try sandbox.unlocked(["import", KcfSandbox.fixture("certificates/ec-p256-leaf-v3-no-ski.der")]).status == 0)
        let imported = try sandbox.unlocked(["import", keyPath, "-l", "leaf key"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let identities = try sandbox.unlocked(["find-identity", "-s", "leaf"])
        #expect(identities.stdout == "  1) \(Self.leafSHA1) \"leaf.example.com\"\n     1 identities found\n")
        let key = try sandbox.unlocked(["find-key", "-l", "leaf key"])
        #expect(key.stdout.contains("\"type\"<uint32>=0x00000049"), "key type 73, elliptic curve")
        #expect(key.stdout.contains("\"bsiz\"<uint32>=0x00000100"), "256 bits")
        #expect(key.stdout.contains("\"klbl\"<blob>=0xD9EA6CF4BE36CAEA1960B81F024990EC43244B48"),
                "labelled with the certificate's public key hash from ec-p256-leaf-v3-no-ski.json")
    }

    @Test("a file that cannot be read is an I/O error (220) that says why, for import and add-certificates")
    func unreadableFile() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let missing = sandbox.file("missing.pem")
        for arguments in [["import", missing], ["import", "-t", "cert", missing], ["add-certificates", missing]] {
            let result = try sandbox.unlocked(arguments)
            #expect(result.status == 220, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("cannot read \(missing): No such file or directory"), "\(arguments): \(result.stderr)")
        }
    }

    @Test("demo needs no set-up, runs from any directory, prints every step and exits 0")
    func demo() throws {
        let sandbox = try KcfSandbox()
        sandbox.environment["KCF_KEYCHAIN"] = nil
        let result = try sandbox.run(["demo"])
        #expect(result.status == 0, "\(result.stderr)")
        let steps = ["1. Create a keychain", "2. Add one item of every class", "3. Query them",
                     "4. Update the generic password", "5. Delete the internet password", "6. Compact",
                     "7. Reopen the file and verify it", "8. Try a wrong password", "Done."]
        var position = result.stdout.startIndex
        for step in steps {
            let found = result.stdout.range(of: step, range: position..<result.stdout.endIndex)
            #expect(found != nil, "step missing or out of order: \(step)")
            if let found { position = found.upperBound }
        }
        #expect(result.stdout.contains("secret now:         \"second mail password\""))
        #expect(result.stdout.contains("identity:           1 found"))
        #expect(result.stdout.contains("epoch:              2"))
        #expect(result.stdout.contains("INSECURE"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.file("data/kcf")), "the demo touches no default keychain")
        let done = try #require(result.stdout.split(separator: "\n").last { $0.hasPrefix("Done. The temporary directory \"") })
        let directory = done.dropFirst("Done. The temporary directory \"".count).prefix { $0 != "\"" }
        #expect(directory.contains("kcf-demo-"))
        #expect(!FileManager.default.fileExists(atPath: String(directory)), "the demo removes its directory")
    }
}
