import Foundation
import Testing

/// `kcf import` of a `pass` password store: a directory of files encrypted with the real gpg to a throwaway key,
/// laid out as `pass` lays them out (a `.gpg-id` at the top, a `.git` directory, entries in folders), with
/// what a real store also holds: symbolic links, files that are not entries, files gpg cannot decrypt.
@Suite("kcf import: pass password stores, decrypted with gpg", .enabled(if: GnuPGHome.isAvailable, "gpg is not installed"))
struct PasswordStoreImportTests {
    /// A store in the sandbox, and the gpg home its entries are encrypted for.
    struct Store {
        let sandbox: KcfSandbox
        let gnupg: GnuPGHome
        let root: String

        init() throws {
            sandbox = try KcfSandbox()
            gnupg = try GnuPGHome(in: sandbox.directory)
            root = sandbox.file("password-store")
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try Data((GnuPGHome.recipient + "\n").utf8).write(to: URL(fileURLWithPath: root + "/.gpg-id"))
            sandbox.environment["GNUPGHOME"] = gnupg.directory
        }

        /// Writes the entry `name` (a path in the store without `.gpg`) with `plaintext`.
        func entry(_ name: String, _ plaintext: [UInt8]) throws {
            let path = root + "/" + name + ".gpg"
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try gnupg.encrypt(plaintext, to: path)
        }

        func entry(_ name: String, _ text: String) throws { try entry(name, Array(text.utf8)) }

        /// Writes a file that is not an entry.
        func file(_ name: String, _ bytes: [UInt8]) throws {
            let path = root + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
    }

    @Test("each entry is a generic password named by its path: first line the secret, the rest the comment, login: the account; what is not imported is listed")
    func store() throws {
        let store = try Store()
        try store.entry("Social/mastodon.social", "D<INNeT?#?Bf4%`zA/4i!/'$T\nlogin: ostqxi\nurl: https://mastodon.social/\n")
        try store.entry("Email/gmail.com", "pw2\r\n")
        try store.entry("Bank/aib", "ws5T@;_UB[Q|P!8\nUserName:  dpbx@fner.ws \npin: 1234")
        try store.entry("CornerCases/space title", "]stDKo{%pk\n")
        try store.entry("CornerCases/empty password", "")
        try store.entry("binary", [0xFF, 0x00, 0x41, 0x0A, 0xE9, 0x0A])
        try store.file(".git/config", Array("[core]\n".utf8))
        try store.file(".gitattributes", Array("*.gpg diff=gpg\n".utf8))
        try store.file("README.md", Array("my store\n".utf8))
        try store.file("Email/bad.gpg", Array("not OpenPGP data\n".utf8))
        // Cut in its session key packet: gpg exits 0 with no output (NODATA). A byte of the integrity check
        // flipped: gpg prints the plaintext, then fails (BADMDC).
        let whole = Array(try Data(contentsOf: URL(fileURLWithPath: store.root + "/Email/gmail.com.gpg")))
        try store.file("Email/cut.gpg", Array(whole.prefix(whole.count / 2)))
        var flipped = whole
        flipped[flipped.count - 3] ^= 1
        try store.file("Email/flipped.gpg", flipped)
        try FileManager.default.createSymbolicLink(atPath: store.root + "/alias.gpg", withDestinationPath: "Social/mastodon.social.gpg")
        try FileManager.default.createSymbolicLink(atPath: store.root + "/elsewhere", withDestinationPath: "/tmp")
        try store.sandbox.createKeychain()

        let result = try store.sandbox.unlocked(["import", store.root])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "6 items imported (6 generic passwords). 6 skipped (listed on stderr).\n")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 7, "\(result.stderr)")
        #expect(lines.contains("kcf: import: skipped Email/bad.gpg: gpg could not decrypt it (exit status 2): no valid OpenPGP data found.; decrypt_message failed: Unknown system error"))
        #expect(lines.contains("kcf: import: skipped Email/cut.gpg: gpg could not decrypt it: it reported no successful decryption (NODATA)"))
        #expect(lines.contains("kcf: import: skipped Email/flipped.gpg: gpg could not decrypt it (exit status 2): WARNING: encrypted message has been manipulated!"))
        #expect(lines.contains("kcf: import: skipped README.md: not a .gpg file"))
        #expect(lines.contains("kcf: import: skipped alias.gpg: a symbolic link (to Social/mastodon.social.gpg): not followed"))
        #expect(lines.contains("kcf: import: skipped elsewhere: a symbolic link (to /tmp): not followed"))
        #expect(lines.contains("kcf: import: not imported: notes that are not UTF-8 text, in 1 item: binary.gpg"))

        let contents = try KeychainContents(store.sandbox)
        #expect(contents.items.count == 6)
        let mastodon = try contents.item("genericPassword", "service", "Social/mastodon.social")
        #expect(mastodon.secretText == "D<INNeT?#?Bf4%`zA/4i!/'$T")
        #expect(mastodon.string("account") == "ostqxi")
        #expect(mastodon.string("comment") == "login: ostqxi\nurl: https://mastodon.social/")
        let gmail = try contents.item("genericPassword", "service", "Email/gmail.com")
        #expect(gmail.secretText == "pw2")
        #expect(gmail.string("account") == "")
        #expect(gmail.string("comment") == nil)
        let bank = try contents.item("genericPassword", "service", "Bank/aib")
        #expect(bank.string("account") == "dpbx@fner.ws")
        #expect(bank.string("comment") == "UserName:  dpbx@fner.ws \npin: 1234")
        #expect(try contents.item("genericPassword", "service", "CornerCases/space title").secretText == "]stDKo{%pk")
        #expect(try contents.item("genericPassword", "service", "CornerCases/empty password").secret.isEmpty)
        #expect(try contents.item("genericPassword", "service", "binary").secret == [0xFF, 0x00, 0x41])
        // As pass users ask for it.
        #expect(try store.sandbox.unlocked(["find-generic-password", "-s", "Social/mastodon.social", "-w"]).stdout == "D<INNeT?#?Bf4%`zA/4i!/'$T\n")
    }

    @Test("without gpg on PATH, or on a path that is no directory, nothing is imported")
    func noGnuPG() throws {
        let store = try Store()
        try store.entry("one", "pw\n")
        try store.sandbox.createKeychain()
        let result = try store.sandbox.run(["import", store.root], extra: ["PATH": store.sandbox.file("empty-bin")])
        #expect(result.status == 1)
        #expect(result.stderr == "kcf: import: \(store.root): not imported: gpg was not found on PATH (kcf decrypts the store with gpg, as pass does)\n")
        let file = try store.sandbox.run(["import", "-f", "pass", store.root + "/.gpg-id"])
        #expect(file.status == 206)
        #expect(file.stderr.contains("not imported: a pass password store is a directory"))
        #expect(try KeychainContents(store.sandbox).items.isEmpty)
    }

    @Test("an entry that decrypts to more than a secret and an attribute can hold is skipped; an empty store imports nothing")
    func hugeEntryAndEmptyStore() throws {
        let store = try Store()
        try store.sandbox.createKeychain()
        let empty = try store.sandbox.unlocked(["import", "-f", "pass", store.root])
        #expect(empty.status == 0, "\(empty.stderr)")
        #expect(empty.stdout == "0 items imported.\n")
        #expect(empty.stderr == "kcf: import: \(store.root) holds no items\n")

        try store.entry("huge", [UInt8](repeating: 0x61, count: 1_048_576 + 65_538))
        try store.entry("fits", [UInt8](repeating: 0x61, count: 1_048_576) + [0x0A] + [UInt8](repeating: 0x62, count: 65_535) + [0x0A])
        let result = try store.sandbox.unlocked(["import", store.root])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr == "kcf: import: skipped huge.gpg: it decrypts to more than 1114113 bytes\n")
        let fits = try KeychainContents(store.sandbox).item("genericPassword", "service", "fits")
        #expect(fits.secret.count == 1_048_576)
        #expect(fits.string("comment")?.utf8.count == 65_535)
    }
}
