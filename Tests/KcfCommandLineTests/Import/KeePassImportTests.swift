import Foundation
import Testing
import KeychainTestSupport

/// `kcf import` of KeePass KDBX 4 databases written by pykeepass (Fixtures/kdbx), end to end: the keychain
/// password is stdin's first line, the database's password the second.
@Suite("kcf import: KeePass KDBX 4")
struct KeePassImportTests {
    struct Expected: Decodable {
        struct Entry: Decodable { let title, username, password, url, notes, group: String }
        let password: String
        let entries: [Entry]
        let recycled: [Entry]
    }

    static func expected(_ name: String) throws -> Expected {
        try JSONDecoder().decode(Expected.self, from: Data(contentsOf: URL(fileURLWithPath: KcfSandbox.fixture("kdbx/\(name).json"))))
    }

    @Test("a database's entries land as items named by group path and title; the report names what was not imported",
          arguments: ["aeskdf-aes256-gzip", "argon2id-chacha20-plain-4.1"])
    func imports(name: String) throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let expected = try Self.expected(name)
        let result = try sandbox.unlocked(["import", KcfSandbox.fixture("kdbx/\(name).kdbx")], then: [expected.password])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "5 items imported (2 generic passwords, 3 internet passwords). 1 skipped (listed on stderr).\n")
        let contents = try KeychainContents(sandbox)
        #expect(contents.items.count == expected.entries.count)
        for entry in expected.entries {
            let label = entry.group.isEmpty ? entry.title : entry.group + "/" + entry.title
            let matches = contents.items.filter { $0.string("label") == label }
            #expect(matches.count == 1, "\(label)")
            guard let item = matches.first else { continue }
            #expect(item.secretText == entry.password, "\(label)")
            #expect(item.string("account") == entry.username, "\(label)")
            #expect((item.string("comment") ?? "") == entry.notes, "\(label)")
            #expect(item.itemClass == (entry.url.isEmpty ? "genericPassword" : "internetPassword"), "\(label)")
        }
        let github = try contents.item("internetPassword", "server", "github.com")
        #expect(github.string("path") == "/login")
        let mail = try contents.item("internetPassword", "server", "mail.example.com")
        #expect(mail.attributes["port"] as? Int == 8443)
        let errors = result.stderr
        #expect(errors.contains("kcf: import: skipped entry"))
        #expect(errors.contains("(\"Recycle Bin/Deleted one\"): it is in the recycle bin"))
        for line in ["not imported: custom field \"PIN\", in 1 item: entry", "not imported: custom field \"Recovery\", in 1 item",
                     "not imported: one-time password seeds (string field \"otp\"), in 1 item", "not imported: attachment \"scan.pdf\", in 1 item",
                     "not imported: expiry time, in 1 item", "not imported: history (earlier versions of the entry), in 1 item: entry"] {
            #expect(errors.contains(line), "\(line) in \(errors)")
        }
        #expect(!errors.contains("deleted-password"))
        #expect(!contents.items.contains { $0.secretText == "deleted-password" || $0.secretText == "old password" })
    }

    @Test("--strict imports nothing from a database with things not imported; an empty database imports nothing, said")
    func strictAndEmpty() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let before = try sandbox.keychainBytes()
        let strict = try sandbox.unlocked(["import", "--strict", KcfSandbox.fixture("kdbx/aeskdf-aes256-plain.kdbx")],
                                          then: [try Self.expected("aeskdf-aes256-plain").password])
        #expect(strict.status != 0)
        #expect(try sandbox.keychainBytes() == before)
        let empty = try sandbox.unlocked(["import", KcfSandbox.fixture("kdbx/empty.kdbx")], then: [try Self.expected("empty").password])
        #expect(empty.status == 0, "\(empty.stderr)")
        #expect(empty.stderr.contains("holds no items"))
    }

    @Test("a wrong password exits 51 and writes nothing")
    func wrongPassword() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let before = try sandbox.keychainBytes()
        let path = KcfSandbox.fixture("kdbx/argon2d-chacha20-gzip.kdbx")
        let result = try sandbox.unlocked(["import", path], then: ["not the password"])
        #expect(result.status == 51)
        #expect(result.stderr == "kcf: import: \(path): not imported: wrong password (the header's HMAC does not verify; or the header was altered)\n")
        #expect(try sandbox.keychainBytes() == before)
    }

    @Test("-P gives the password with a warning; -f kdbx names the format")
    func passwordOption() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let expected = try Self.expected("aeskdf-aes256-gzip")
        let result = try sandbox.unlocked(["import", "-f", "kdbx", "-P", expected.password, KcfSandbox.fixture("kdbx/aeskdf-aes256-gzip.kdbx")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("kcf: warning: a passphrase given on the command line is visible to other users"))
        #expect(try KeychainContents(sandbox).items.count == 5)
    }

    @Test("--key-file: a database with a key file and a password, one with a key file alone (an empty password line); a wrong key file exits 51")
    func keyFile() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let both = try sandbox.unlocked(["import", "--key-file", KcfSandbox.fixture("kdbx/v2.keyx"), KcfSandbox.fixture("kdbx/keyfile-v2-and-password.kdbx")],
                                        then: [try Self.expected("keyfile-v2-and-password").password])
        #expect(both.status == 0, "\(both.stderr)")
        let before = try sandbox.keychainBytes()
        let wrong = try sandbox.unlocked(["import", "--key-file", KcfSandbox.fixture("kdbx/hashed.key"), KcfSandbox.fixture("kdbx/keyfile-v2-and-password.kdbx")],
                                         then: [try Self.expected("keyfile-v2-and-password").password])
        #expect(wrong.status == 51)
        #expect(wrong.stderr.contains("wrong password or key file"))
        #expect(try sandbox.keychainBytes() == before)
        let other = try KcfSandbox()
        try other.createKeychain()
        let alone = try other.unlocked(["import", "--key-file", KcfSandbox.fixture("kdbx/hashed.key"), KcfSandbox.fixture("kdbx/keyfile-hashed-only.kdbx")], then: [""])
        #expect(alone.status == 0, "\(alone.stderr)")
        #expect(try KeychainContents(other).items.count == 5)
        let misplaced = try other.unlocked(["import", "--key-file", KcfSandbox.fixture("kdbx/hashed.key"), KcfSandbox.fixture("deflate/fixed.bin")])
        #expect(misplaced.status == 2)
    }

    @Test("KDBX 3.1 is refused by name (206); a damaged database exits non-zero naming the damage and writes nothing")
    func refusals() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let before = try sandbox.keychainBytes()
        let kdbx3 = sandbox.file("old.kdbx")
        try Data([0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5, 0x01, 0x00, 0x03, 0x00] + [UInt8](repeating: 0, count: 100))
            .write(to: URL(fileURLWithPath: kdbx3))
        let old = try sandbox.unlocked(["import", kdbx3], then: ["x"])
        #expect(old.status == 206)
        #expect(old.stderr.contains("KDBX 3.1 is not supported; save it as KDBX 4 in KeePass/KeePassXC"))
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: KcfSandbox.fixture("kdbx/aeskdf-aes256-gzip.kdbx"))))
        bytes[bytes.count - 100] ^= 0x10
        let damaged = sandbox.file("damaged.kdbx")
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let result = try sandbox.unlocked(["import", damaged], then: [try Self.expected("aeskdf-aes256-gzip").password])
        #expect(result.status == 206)
        #expect(result.stderr.contains("HMAC does not match: the payload is damaged or altered"), "\(result.stderr)")
        let cut = sandbox.file("cut.kdbx")
        try Data(bytes.prefix(bytes.count - 40)).write(to: URL(fileURLWithPath: cut))
        let truncated = try sandbox.unlocked(["import", cut], then: [try Self.expected("aeskdf-aes256-gzip").password])
        #expect(truncated.status == 206)
        #expect(truncated.stderr.contains("cut short") || truncated.stderr.contains("ends inside"), "\(truncated.stderr)")
        #expect(try sandbox.keychainBytes() == before)
    }
}
