import Foundation
import Testing

/// `kcf export`: certificates byte for byte as imported; private keys as PKCS #8 exactly as Python `cryptography`
/// wrote the fixtures (Fixtures/certificates/keys/*.pem, and the leaf key of CertificateAndDemoTests), whatever
/// form they were imported from.
@Suite("kcf export: certificates (X.509) and private keys (PKCS #8), DER or PEM")
struct ExportTests {
    static let version1 = KcfSandbox.fixture("certificates/rsa2048-v1.der")
    static let leaf = KcfSandbox.fixture("certificates/ec-p256-leaf-v3-no-ski.der")
    static let version1Key = KcfSandbox.fixture("certificates/keys/rsa2048-v1.pem")

    static func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test("certificates: DER as imported, PEM blocks for several, -c and -Z choose; several in DER is refused; none 44")
    func certificates() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.unlocked(["add-certificates", Self.version1, Self.leaf]).status == 0)
        let der = try sandbox.unlocked(["export", "-c", "Version"])
        #expect(der.status == 0, "\(der.stderr)")
        #expect(der.stdoutBytes == (try Self.bytes(Self.version1)))
        let byHash = try sandbox.unlocked(["export", "-Z", CertificateAndDemoTests.leafSHA1])
        #expect(byHash.stdoutBytes == (try Self.bytes(Self.leaf)))

        let pem = try sandbox.unlocked(["export", "-p"])
        #expect(pem.status == 0)
        let blocks = pem.stdout.components(separatedBy: "-----END CERTIFICATE-----\n").filter { !$0.isEmpty }
        #expect(blocks.count == 2)
        let decoded = blocks.map { block in
            Data(base64Encoded: block.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()).map(Array.init) ?? []
        }
        #expect(Set(decoded) == Set([try Self.bytes(Self.version1), try Self.bytes(Self.leaf)]))

        let several = try sandbox.unlocked(["export"])
        #expect(several.status == 1)
        #expect(several.stdout.isEmpty)
        #expect(several.stderr.contains("2 items match and DER holds one"))
        #expect(try sandbox.unlocked(["export", "-c", "nothing"]).status == 44)
    }

    @Test("private keys: PKCS #8 as cryptography writes it, from a PKCS #8 and from a SEC 1 import; only with -o or --yes")
    func privateKeys() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.unlocked(["import", Self.version1Key, "-l", "rsa"]).status == 0)
        let sec1 = sandbox.file("leaf-sec1.pem")
        try Data((CertificateAndDemoTests.leafKeySEC1 + "\n").utf8).write(to: URL(fileURLWithPath: sec1))
        #expect(try sandbox.unlocked(["import", sec1, "-l", "leaf"]).status == 0)

        let refused = try sandbox.unlocked(["export", "-t", "privKeys", "-c", "rsa", "-p"])
        #expect(refused.status == 2)
        #expect(refused.stdout.isEmpty)

        let rsa = try sandbox.unlocked(["export", "-t", "privKeys", "-c", "rsa", "-p", "--yes"])
        #expect(rsa.status == 0, "\(rsa.stderr)")
        #expect(rsa.stdout == String(decoding: try Self.bytes(Self.version1Key), as: UTF8.self))

        let file = sandbox.file("leaf-key.pem")
        let written = try sandbox.unlocked(["export", "-t", "privKeys", "-c", "leaf", "-p", "-o", file])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(written.stdout.isEmpty)
        #expect(String(decoding: try Self.bytes(file), as: UTF8.self) == CertificateAndDemoTests.leafKeyPKCS8 + "\n")
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        // DER: the same PKCS #8, unarmoured.
        let der = try sandbox.unlocked(["export", "-t", "privKeys", "-c", "leaf", "--yes"])
        let body = CertificateAndDemoTests.leafKeyPKCS8.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        #expect(der.stdoutBytes == Array(Data(base64Encoded: body) ?? Data()))

        // -o never writes over a file.
        let existing = sandbox.file("existing")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
        let over = try sandbox.unlocked(["export", "-t", "privKeys", "-c", "rsa", "-o", existing])
        #expect(over.status == 220)
        #expect(try Self.bytes(existing) == Array("keep me".utf8))
    }

    @Test("export to a closed pipe exits 4")
    func closedPipe() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.unlocked(["import", Self.version1]).status == 0)
        let result = try sandbox.run(["export", "-p"], stdinBytes: Array((KcfSandbox.password + "\n").utf8), stdout: .brokenPipe)
        #expect(result.status == 4)
    }
}
