import Foundation
import Testing

/// `kcf import` of Bitwarden's and 1Password's CSV exports, end to end. The inputs are written as the tools
/// write them: Bitwarden's exporter is papaparse's `unparse` over its export rows (bitwarden/clients,
/// libs/tools/export/vault-export: individual-vault-export.service.ts and base-vault-export.service.ts), so
/// CRLF between records, no newline after the last, quotes only around fields with a comma, quote, line break
/// or edge space, a login's addresses joined by commas, custom fields as `name: value` lines; the column
/// layout is Bitwarden's help page "Condition a Bitwarden .csv or .json". 1Password 8 quotes every field and
/// ends lines with LF (the export in roddhjav/pass-import tests/assets/db/1password8.csv).
@Suite("kcf import: Bitwarden and 1Password CSV exports")
struct CSVExportImportTests {
    /// A Bitwarden export of a personal vault, with every kind of row its exporter writes.
    static let bitwarden = [
        "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp",
        "Social,1,login,Twitter,,,0,twitter.com,me@example.com,password123,",
        ",,login,EVGA,,,0,https://www.evga.com/support/login.asp,hello@bitwarden.com,fakepassword,TOTPSEED123",
        "Finance,,login,My Bank,\"Bank PIN is 1234\nCall 555-0100\",PIN: 1234,1,\"https://www.wellsfargo.com/home.jhtml,https://wellsfargo.com\",john.smith,\"pass,word \"\"quoted\"\"\",",
        ",,note,My Note,This is a secure note.,,0,,,,",
        ",,login,Local app,,,0,,ann,s3cret,",
    ].joined(separator: "\r\n")

    /// Writes `text` to a file in the sandbox and returns its path.
    static func write(_ text: String, _ name: String, in sandbox: KcfSandbox) throws -> String {
        try write(Array(text.utf8), name, in: sandbox)
    }

    static func write(_ bytes: [UInt8], _ name: String, in sandbox: KcfSandbox) throws -> String {
        let path = sandbox.file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a Bitwarden export: logins with an address become internet passwords, others generic ones, notes secure notes; what is not kept is listed")
    func bitwardenExport() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let path = try Self.write(Self.bitwarden, "bitwarden_export.csv", in: sandbox)
        let result = try sandbox.unlocked(["import", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "5 items imported (2 generic passwords, 3 internet passwords).\n")
        let contents = try KeychainContents(sandbox)
        #expect(contents.items.count == 5)

        let twitter = try contents.item("internetPassword", "server", "twitter.com")
        #expect(twitter.string("account") == "me@example.com")
        #expect(twitter.string("label") == "Twitter")
        #expect(twitter.string("protocol") == "any", "no scheme: protocol 0, named any (kSecProtocolTypeAny)")
        #expect(twitter.secretText == "password123")

        let evga = try contents.item("internetPassword", "server", "www.evga.com")
        #expect(evga.string("protocol") == "https")
        #expect(evga.string("path") == "/support/login.asp")
        #expect(evga.string("account") == "hello@bitwarden.com")
        #expect(evga.secretText == "fakepassword")

        let bank = try contents.item("internetPassword", "server", "www.wellsfargo.com")
        #expect(bank.string("path") == "/home.jhtml")
        #expect(bank.string("comment") == "Bank PIN is 1234\nCall 555-0100")
        #expect(bank.secretText == "pass,word \"quoted\"")

        let note = try contents.item("genericPassword", "service", "My Note")
        #expect(note.string("account") == "")
        #expect(note.string("description") == "secure note")
        #expect(note.string("type") == "note")
        #expect(note.secretText == "This is a secure note.")

        let local = try contents.item("genericPassword", "service", "Local app")
        #expect(local.string("account") == "ann")
        #expect(local.string("label") == "Local app")
        #expect(local.secretText == "s3cret")

        // What has no place in a keychain is named, with the items that had it.
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains("kcf: import: not imported: folder, in 2 items: line 2 (\"Twitter\"), line 4 (\"My Bank\")"))
        #expect(lines.contains("kcf: import: not imported: favorite, in 1 item: line 2 (\"Twitter\")"))
        #expect(lines.contains("kcf: import: not imported: login_totp (one-time password seeds), in 1 item: line 3 (\"EVGA\")"))
        #expect(lines.contains("kcf: import: not imported: fields (custom fields), in 1 item: line 4 (\"My Bank\")"))
        #expect(lines.contains("kcf: import: not imported: reprompt (ask for the master password again), in 1 item: line 4 (\"My Bank\")"))
        #expect(lines.contains("kcf: import: not imported: web addresses after the first (in login_uri), in 1 item: line 4 (\"My Bank\")"))
        #expect(lines.count == 6, "\(result.stderr)")

        // Found as security's users look them up.
        #expect(try sandbox.unlocked(["find-internet-password", "-s", "www.evga.com", "-w"]).stdout == "fakepassword\n")
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "Local app", "-a", "ann", "-w"]).stdout == "s3cret\n")
    }

    @Test("an organisation's Bitwarden export (collections, no folder or favorite) imports; its collections are listed")
    func bitwardenOrganisationExport() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let path = try Self.write([
            "collections,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp",
            "\"Social,Marketing\",login,Twitter,,,0,twitter.com,me@example.com,password123,",
            ",login,My Bank,,,0,https://www.wellsfargo.com/home.jhtml,john.smith,password123456,",
        ].joined(separator: "\r\n"), "org.csv", in: sandbox)
        let result = try sandbox.unlocked(["import", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "2 items imported (2 internet passwords).\n")
        #expect(result.stderr == "kcf: import: not imported: collections, in 1 item: line 2 (\"Twitter\")\n")
        #expect(try KeychainContents(sandbox).item("internetPassword", "server", "www.wellsfargo.com").secretText == "password123456")
    }

    /// A 1Password 8 export: every field quoted, LF, a multi-line note (pass-import's 1password8.csv, shortened).
    static let onePassword = """
        Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes
        "dpbx@afoqwdr.tx","https://afoqwdr.tx","dpbx","9KVHnx:.S_S;cF`=CE@e\\p{v6","","false","false","",""
        "ovh.com","https://www.ovh.com/manager/web/","bynbyjhqjz","3Z-VW!i,j(&!zRGPu(hFe]s'(","","false","false","",""
        "Wi-Fi","","","correct horse","","true","false","home,network",""
        "note","","","","otpauth://totp/x?secret=JBSWY3DPEHPK3PXP","false","true","","This is a multiline note entry.
        acutely slashing upper cringing lunchbox."

        """

    @Test("a 1Password export: every field quoted, a multi-line note; its OTP seeds, favourites, archive flags and tags are listed")
    func onePasswordExport() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let path = try Self.write(Self.onePassword, "1PasswordExport.csv", in: sandbox)
        let result = try sandbox.unlocked(["import", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "4 items imported (2 generic passwords, 2 internet passwords).\n")
        let contents = try KeychainContents(sandbox)
        let first = try contents.item("internetPassword", "server", "afoqwdr.tx")
        #expect(first.string("account") == "dpbx")
        #expect(first.string("label") == "dpbx@afoqwdr.tx")
        #expect(first.secretText == "9KVHnx:.S_S;cF`=CE@e\\p{v6")
        let ovh = try contents.item("internetPassword", "server", "www.ovh.com")
        #expect(ovh.string("path") == "/manager/web/")
        #expect(ovh.secretText == "3Z-VW!i,j(&!zRGPu(hFe]s'(")
        let wifi = try contents.item("genericPassword", "service", "Wi-Fi")
        #expect(wifi.string("account") == "")
        #expect(wifi.secretText == "correct horse")
        let note = try contents.item("genericPassword", "service", "note")
        #expect(note.string("comment") == "This is a multiline note entry.\nacutely slashing upper cringing lunchbox.")
        #expect(note.secret.isEmpty)
        let lines = Set(result.stderr.split(separator: "\n").map(String.init))
        #expect(lines == [
            "kcf: import: not imported: Favorite, in 1 item: line 4 (\"Wi-Fi\")",
            "kcf: import: not imported: Tags, in 1 item: line 4 (\"Wi-Fi\")",
            "kcf: import: not imported: OTPAuth (one-time password seeds), in 1 item: line 5 (\"note\")",
            "kcf: import: not imported: Archived (imported as any other item), in 1 item: line 5 (\"note\")",
        ])
    }

    @Test("a byte order mark, CRLF inside and between records, blank lines and an unknown column read; the column is listed")
    func toleratedShapes() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let text = "Title,Url,Username,Password,Notes,Vault\r\n\r\n"
            + "\"A, B\",,ann,\"p\"\"w\",\"line one\r\nline two\",Private\r\n\r\n"
            + "C,https://[::1]:8443/x?y=1#z,,pw,,\r\n\r\n"
        let path = try Self.write([0xEF, 0xBB, 0xBF] + Array(text.utf8), "bom.csv", in: sandbox)
        let result = try sandbox.unlocked(["import", "-f", "1password-csv", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "2 items imported (1 generic password, 1 internet password).\n")
        let contents = try KeychainContents(sandbox)
        let first = try contents.item("genericPassword", "service", "A, B")
        #expect(first.secretText == "p\"w")
        #expect(first.string("comment") == "line one\r\nline two")
        let second = try contents.item("internetPassword", "label", "C")
        #expect(second.attributes["port"] as? Int == 8443)
        #expect(second.string("path") == "/x")
        let lines = Set(result.stderr.split(separator: "\n").map(String.init))
        #expect(lines == [
            "kcf: import: not imported: column \"Vault\" (not a column kcf reads), in 1 item: line 3 (\"A, B\")",
            "kcf: import: not imported: its query (of the address in Url), in 1 item: line 6 (\"C\")",
            "kcf: import: not imported: its fragment (of the address in Url), in 1 item: line 6 (\"C\")",
        ])
    }

    /// Malformed exports, each with the defect it carries and what kcf must say.
    static let malformed: [(name: String, bytes: [UInt8], message: String)] = [
        ("a quoted field never closed", Array((bitwardenHeader + "\r\n,,login,X,\"notes\r\nmore,,0,,a,b,").utf8),
         "line 2: a quoted field starts here and is never closed"),
        ("a quote after a closing quote", Array((bitwardenHeader + "\r\n,,login,\"X\"Y,,,0,,a,b,").utf8),
         "line 2: a quote inside a quoted field must be doubled (\"\"); here one is followed by \"Y\""),
        ("a quote inside an unquoted field", Array((bitwardenHeader + "\r\n,,login,X\"Y,,,0,,a,b,").utf8),
         "line 2: a quote inside an unquoted field"),
        ("a record with a field missing", Array((bitwardenHeader + "\r\n,,login,X,,,0,,a,b,\r\n,,login,Y,,,0,,a,b").utf8),
         "line 3: 10 fields where the header has 11"),
        ("a record with a field too many", Array((bitwardenHeader + "\r\n,,login,X,,,0,,a,b,,").utf8),
         "line 2: 12 fields where the header has 11"),
        ("Latin-1 text", Array((bitwardenHeader + "\r\n,,login,Z").utf8) + [0xFC] + Array("rich,,,0,,a,b,".utf8),
         "line 2: the text is not UTF-8"),
        ("a column named twice", Array((bitwardenHeader + ",name\r\n,,login,X,,,0,,a,b,,").utf8),
         "line 1: the column \"name\" is named twice"),
        ("an empty file", [], "the file is empty"),
        ("a header without the password column", Array("folder,favorite,type,name,notes,fields,login_uri,login_username\r\n,,login,X,,,,a".utf8),
         "line 1: not a Bitwarden CSV export: the header has no column \"login_password\""),
    ]

    static let bitwardenHeader = "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp"

    @Test("a malformed export imports nothing: exit 206 and the line that is wrong", arguments: 0..<malformed.count)
    func malformedExport(_ index: Int) throws {
        let (name, bytes, message) = Self.malformed[index]
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "kept", service: "before", secret: "old")
        let path = try Self.write(bytes, "malformed.csv", in: sandbox)
        let result = try sandbox.unlocked(["import", "-f", "bitwarden-csv", path])
        #expect(result.status == 206, "\(name): \(result.stderr)")
        #expect(result.stderr.contains(path + ": not imported, as a Bitwarden CSV export: " + message), "\(name): \(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try KeychainContents(sandbox).items.count == 1, "\(name): nothing imported")
    }

    @Test("a header without records imports nothing and says so, exit 0; a file that is no export is refused before the password is asked")
    func emptyAndUnknownFiles() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let empty = try Self.write(Self.bitwardenHeader + "\r\n", "empty.csv", in: sandbox)
        let result = try sandbox.unlocked(["import", empty])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "0 items imported.\n")
        #expect(result.stderr == "kcf: import: \(empty) holds no items\n")

        let other = try Self.write("url,username,password,extra,name,grouping,fav\r\nhttp://sn,,,,note,,0", "lastpass.csv", in: sandbox)
        let unknown = try sandbox.run(["import", other])
        #expect(unknown.status == 206)
        #expect(unknown.stderr.contains("is neither a DER certificate, a private key nor an export kcf reads (give -t or -f to see why)"))
        let forced = try sandbox.run(["import", "-f", "1password-csv", other])
        #expect(forced.status == 206)
        #expect(forced.stderr.contains("not a 1Password CSV export: the header has no column \"Title\""), "\(forced.stderr)")
        #expect(!forced.stderr.contains("password to unlock"), "refused before asking for the keychain's password")
    }

    @Test("options: -f takes the five formats, not with -t; -l and --strict fit only their kind of import")
    func options() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let path = try Self.write(Self.bitwarden, "b.csv", in: sandbox)
        let bad = try sandbox.run(["import", "-f", "lastpass", path])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("-f takes bitwarden-csv, 1password-csv, pass, dump-keychain, kdbx, not \"lastpass\""))
        #expect(try sandbox.run(["import", "-f", "bitwarden-csv", "-t", "cert", path]).status == 2)
        #expect(try sandbox.run(["import", "-l", "Label", path]).stderr.contains("-l labels one certificate or key"))
        let strict = try sandbox.run(["import", "--strict", ImportUpdateAndDeleteCertificateTests.version1])
        #expect(strict.status == 2)
        #expect(strict.stderr.contains("--strict applies to exports (-f)"))
        #expect(try KeychainContents(sandbox).items.isEmpty)
    }

    @Test("an item twice: the same imports once (the second listed); different contents import nothing (45)")
    func duplicatesInTheExport() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let same = try Self.write([Self.bitwardenHeader, ",,login,A,,,0,https://a.example,ann,pw,", ",,login,A,,,0,https://a.example,ann,pw,",
                                   ",,login,B,,,0,,bob,pw,"].joined(separator: "\r\n"), "same.csv", in: sandbox)
        let once = try sandbox.unlocked(["import", same])
        #expect(once.status == 0, "\(once.stderr)")
        #expect(once.stdout == "2 items imported (1 generic password, 1 internet password). 1 skipped (listed on stderr).\n")
        #expect(once.stderr == "kcf: import: skipped line 3 (\"A\"): the same item as line 2 (\"A\")\n")

        let sandbox2 = try KcfSandbox()
        try sandbox2.createKeychain()
        let different = try Self.write([Self.bitwardenHeader, ",,login,C,,,0,,carol,first,", ",,login,B,,,0,,bob,pw,",
                                        ",,login,C,,,0,,carol,second,"].joined(separator: "\r\n"), "different.csv", in: sandbox2)
        let refused = try sandbox2.unlocked(["import", different])
        #expect(refused.status == 45)
        #expect(refused.stderr.contains("line 2 (\"C\") and line 4 (\"C\") are one keychain item (generic password, service \"C\", account \"carol\") with different contents"), "\(refused.stderr)")
        #expect(try KeychainContents(sandbox2).items.isEmpty, "nothing imported")
    }

    @Test("an item the keychain has: 45 and nothing imported; -U updates it and adds the rest in one transaction")
    func existingItems() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "Local app", secret: "old", extra: ["-j", "kept comment"])
        let path = try Self.write(Self.bitwarden, "b.csv", in: sandbox)
        let refused = try sandbox.unlocked(["import", path])
        #expect(refused.status == 45)
        #expect(refused.stderr.contains("kcf: import: line 7 (\"Local app\") is already in the keychain (generic password, service \"Local app\", account \"ann\"); nothing was imported (-U updates the items the keychain has)"), "\(refused.stderr)")
        #expect(try KeychainContents(sandbox).items.count == 1)

        let updated = try sandbox.unlocked(["import", "-U", path])
        #expect(updated.status == 0, "\(updated.stderr)")
        #expect(updated.stdout == "4 items imported, 1 updated (2 generic passwords, 3 internet passwords).\n")
        let contents = try KeychainContents(sandbox)
        #expect(contents.items.count == 5)
        let local = try contents.item("genericPassword", "service", "Local app")
        #expect(local.secretText == "s3cret")
        #expect(local.string("label") == "Local app")
        #expect(local.string("comment") == "kept comment", "an attribute the import lacks is kept")
    }

    @Test("--strict imports nothing when anything would be skipped or not kept, and imports a clean export")
    func strict() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let path = try Self.write(Self.bitwarden, "b.csv", in: sandbox)
        let refused = try sandbox.unlocked(["import", "--strict", path])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("--strict: 0 items would be skipped and 6 kinds of value not kept (listed above); nothing was imported"), "\(refused.stderr)")
        #expect(try KeychainContents(sandbox).items.isEmpty)
        let clean = try Self.write([Self.bitwardenHeader, ",,login,A,,,0,https://a.example,ann,pw,"].joined(separator: "\r\n"), "clean.csv", in: sandbox)
        let imported = try sandbox.unlocked(["import", "--strict", clean])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.isEmpty)
    }

    @Test("items that cannot be kept: a card row, a 2 MiB password skipped; notes over 65,535 bytes left out; an address without a server")
    func itemsThatDoNotFit() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let longNotes = String(repeating: "n", count: 70_000)
        let hugePassword = String(repeating: "p", count: 2 << 20)
        let path = try Self.write([
            Self.bitwardenHeader,
            ",,card,Visa,,,0,,,,",
            ",,login,Huge,,,0,,ann,\(hugePassword),",
            ",,login,Long notes,\(longNotes),,0,,ann,pw,",
            ",,login,Mail,,,0,mailto:ann@example.com,ann,pw2,",
            ",,,Typeless,,,0,,,,",
        ].joined(separator: "\r\n"), "odd.csv", in: sandbox)
        let result = try sandbox.unlocked(["import", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "2 items imported (2 generic passwords). 3 skipped (listed on stderr).\n")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines == [
            "kcf: import: skipped line 2 (\"Visa\"): its type \"card\" is neither login nor note, the two kinds a Bitwarden CSV export has",
            "kcf: import: skipped line 3 (\"Huge\"): its secret is 2097152 bytes; a keychain item holds at most 1048576",
            "kcf: import: skipped line 6 (\"Typeless\"): it has no type (Bitwarden's CSV export has logins and notes)",
            "kcf: import: not imported: comment (icmt) longer than 65535 bytes, in 1 item: line 4 (\"Long notes\")",
            "kcf: import: not imported: web addresses that have no server (in login_uri; stored as a generic password), in 1 item: line 5 (\"Mail\")",
        ])
        let contents = try KeychainContents(sandbox)
        #expect(try contents.item("genericPassword", "service", "Long notes").string("comment") == nil)
        #expect(try contents.item("genericPassword", "service", "Mail").secretText == "pw2")
    }

    @Test("an import to a closed stdout imports, then exits 4")
    func closedStdout() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let path = try Self.write(Self.bitwarden, "b.csv", in: sandbox)
        let password = Array((KcfSandbox.password + "\n").utf8)
        #expect(try sandbox.run(["import", path], stdinBytes: password, stdout: .brokenPipe).status == 4)
        #expect(try sandbox.run(["import", "-U", path], stdinBytes: password, stdout: .closed).status == 4)
        #expect(try KeychainContents(sandbox).items.count == 5)
    }
}
