import Foundation
import Testing

/// `import -U`, `delete-certificate` and `delete-identity`. Hashes are the fixtures' sha1sum values
/// (CertificateAndDemoTests), not kcf's.
@Suite("kcf import -U, delete-certificate and delete-identity")
struct ImportUpdateAndDeleteCertificateTests {
    static let leaf = KcfSandbox.fixture("certificates/ec-p256-leaf-v3-no-ski.der")
    static let version1 = KcfSandbox.fixture("certificates/rsa2048-v1.der")
    static let root = KcfSandbox.fixture("certificates/rsa2048-ca-v3-ski.der")
    static let version1Key = KcfSandbox.fixture("certificates/keys/rsa2048-v1.pem")

    /// How many items of the class the text of `dump-keychain` lists.
    static func count(_ itemClass: String, _ sandbox: KcfSandbox) throws -> Int {
        try sandbox.unlocked(["dump-keychain"]).stdout.components(separatedBy: "class: \"\(itemClass)\"").count - 1
    }

    @Test("importing the same certificate or key again exits 45; with -U it updates the one item (label), and -U adds a new one")
    func importUpdate() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.unlocked(["import", Self.version1]).stdout == "1 certificate imported.\n")
        let again = try sandbox.unlocked(["import", Self.version1, "-l", "Renamed"])
        #expect(again.status == 45)
        #expect(again.stderr.contains("use -U to update it"))
        let updated = try sandbox.unlocked(["import", "-U", Self.version1, "-l", "Renamed"])
        #expect(updated.status == 0, "\(updated.stderr)")
        #expect(updated.stdout == "1 certificate updated.\n")
        #expect(try Self.count("cert", sandbox) == 1)
        #expect(try sandbox.unlocked(["find-certificate"]).stdout.contains("\"labl\"<blob>=\"Renamed\""))
        // The certificate is still itself: the same DER.
        let pem = try sandbox.unlocked(["find-certificate", "-p"]).stdout
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        #expect(Data(base64Encoded: body) == (try Data(contentsOf: URL(fileURLWithPath: Self.version1))))
        // -U on a certificate the keychain does not have adds it.
        #expect(try sandbox.unlocked(["import", "-U", Self.leaf]).stdout == "1 certificate imported.\n")
        #expect(try Self.count("cert", sandbox) == 2)

        #expect(try sandbox.unlocked(["import", Self.version1Key]).stdout == "1 key imported.\n")
        #expect(try sandbox.unlocked(["import", Self.version1Key]).status == 45)
        let key = try sandbox.unlocked(["import", "-U", Self.version1Key, "-l", "Key, renamed"])
        #expect(key.stdout == "1 key updated.\n", "\(key.stderr)")
        #expect(try Self.count("keys", sandbox) == 1)
        #expect(try sandbox.unlocked(["find-key"]).stdout.contains("\"labl\"<blob>=\"Key, renamed\""))
        #expect(try sandbox.unlocked(["find-identity"]).stdout.contains("1 identities found"), "the key still pairs with its certificate")
    }

    @Test("delete-certificate: by hash (SHA-1 or SHA-256, any case, colons), by name; none 44; several 1 and nothing deleted; -c or -Z required")
    func deleteCertificate() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.unlocked(["add-certificates", Self.leaf, Self.version1, Self.root]).status == 0)
        #expect(try sandbox.unlocked(["delete-certificate"]).status == 2)
        #expect(try sandbox.unlocked(["delete-certificate", "-Z", "12ab"]).status == 2)
        #expect(try sandbox.unlocked(["delete-certificate", "-c", "no such name"]).status == 44)
        let several = try sandbox.unlocked(["delete-certificate", "-c", "e"])
        #expect(several.status == 1)
        #expect(several.stderr.contains("3 certificates match; nothing was deleted"))
        #expect(try Self.count("cert", sandbox) == 3)

        let colons = stride(from: 0, to: 40, by: 2).map { index -> String in
            let start = CertificateAndDemoTests.leafSHA1.index(CertificateAndDemoTests.leafSHA1.startIndex, offsetBy: index)
            return String(CertificateAndDemoTests.leafSHA1[start..<CertificateAndDemoTests.leafSHA1.index(start, offsetBy: 2)]).lowercased()
        }.joined(separator: ":")
        let byHash = try sandbox.unlocked(["delete-certificate", "-Z", colons])
        #expect(byHash.status == 0, "\(byHash.stderr)")
        #expect(byHash.stdout == "deleted certificate \"leaf.example.com\", SHA-1 \(CertificateAndDemoTests.leafSHA1)\n")
        #expect(try sandbox.unlocked(["find-certificate", "-c", "leaf"]).status == 44)
        #expect(try Self.count("cert", sandbox) == 2)

        // sha256sum of Fixtures/certificates/rsa2048-v1.der.
        let sha256 = try ShellProcess.run("sha256sum", [Self.version1]).stdout.prefix(64)
        #expect(try sandbox.unlocked(["delete-certificate", "-Z", sha256.uppercased()]).status == 0)
        #expect(try sandbox.unlocked(["delete-certificate", "-c", "Test Root"]).status == 0)
        #expect(try Self.count("cert", sandbox) == 0)
        #expect(try sandbox.unlocked(["delete-certificate", "-c", "Test Root"]).status == 44)
    }

    @Test("delete-identity deletes the certificate and its private key together; a certificate without a key is no identity (44)")
    func deleteIdentity() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.unlocked(["add-certificates", Self.version1, Self.root]).status == 0)
        #expect(try sandbox.unlocked(["import", Self.version1Key]).status == 0)
        #expect(try sandbox.unlocked(["delete-identity", "-c", "Test Root"]).status == 44)
        let deleted = try sandbox.unlocked(["delete-identity", "-Z", CertificateAndDemoTests.rsaV1SHA1])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.stdout.hasPrefix("deleted identity (certificate and private key) \"Version 1\""))
        #expect(try sandbox.unlocked(["find-identity"]).stdout.contains("0 identities found"))
        #expect(try Self.count("keys", sandbox) == 0)
        #expect(try Self.count("cert", sandbox) == 1, "the root certificate is kept")
    }

    @Test("delete-certificate and import -U on a closed pipe exit 4 after doing their work")
    func closedPipe() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.unlocked(["import", Self.version1]).status == 0)
        let password = Array((KcfSandbox.password + "\n").utf8)
        #expect(try sandbox.run(["import", "-U", Self.version1], stdinBytes: password, stdout: .brokenPipe).status == 4)
        #expect(try sandbox.run(["delete-certificate", "-c", "Version"], stdinBytes: password, stdout: .brokenPipe).status == 4)
        #expect(try Self.count("cert", sandbox) == 0)
    }
}
