import Foundation
import Testing

/// `kcf import` of the text macOS `security dump-keychain -d` prints. The items are copied from, or written as,
/// published output of the real tool: pass-import's tests/db/apple-keychain.txt (roddhjav/pass-import, a
/// dump of a macOS keychain: version lines, the print name as attribute 0x00000007, `atyp` as a blob, a
/// backslash in data shown as hex and `\134`, a secure note's property list with `\012` and unescaped quotes).
/// Forms that file does not show — a hex-only 32-bit value with its trailing space (`0x000001BB `), a port
/// whose last byte is printable (`0x00000050  "\000\000\000P"`), a certificate's class `0x80001000 ` — are
/// written by ``appleBuffer(_:)`` as Apple's `print_buffer` and `print_uint32` write them
/// (apple-oss-distributions Security, SecurityTool keychain_utilities.c).
@Suite("kcf import: the text of security dump-keychain -d")
struct SecurityDumpImportTests {
    /// Bytes as Apple's `print_buffer` prints them: quoted when every byte is printable and no backslash;
    /// `0x` and hex then one space when none is; hex, two spaces and the quoted form with octal escapes for a mix.
    static func appleBuffer(_ bytes: [UInt8]) -> String {
        let printable = bytes.map { $0 >= 0x20 && $0 <= 0x7E && $0 != 0x5C }
        let hex = printable.contains(false), ascii = printable.contains(true)
        var text = ""
        if hex { text += "0x" + bytes.map { String(format: "%02X", $0) }.joined() + (ascii ? "  " : " ") }
        if ascii {
            text += "\"" + bytes.map { $0 >= 0x20 && $0 <= 0x7E && $0 != 0x5C ? String(UnicodeScalar($0)) : String(format: "\\%03o", $0) }.joined() + "\""
        }
        return text
    }

    /// A 32-bit value as `print_uint32` prints it: its four bytes, most significant first, through print_buffer.
    static func appleUInt32(_ value: UInt32) -> String {
        appleBuffer([24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> UInt32($0)) })
    }

    /// Items of pass-import's dump, as printed, and items written by the functions above.
    static func dump(certificate: [UInt8]) -> String {
        """
        keychain: "/Users/user/Desktop/apple-keychain.keychain"
        version: 256
        class: "genp"
        attributes:
            0x00000007 <blob>="mastodon.social"
            0x00000008 <blob>=<NULL>
            "acct"<blob>="ostqxi"
            "cdat"<timedate>=0x32303139303431383138343235325A00  "20190418184252Z\\000"
            "crtr"<uint32>=<NULL>
            "cusi"<sint32>=<NULL>
            "desc"<blob>=<NULL>
            "gena"<blob>=<NULL>
            "icmt"<blob>=<NULL>
            "invi"<sint32>=<NULL>
            "mdat"<timedate>=0x32303139303431383138343235325A00  "20190418184252Z\\000"
            "nega"<sint32>=<NULL>
            "prot"<blob>=<NULL>
            "scrp"<sint32>=<NULL>
            "svce"<blob>="mastodon.social"
            "type"<uint32>=<NULL>
        data:
        "D<INNeT?#?Bf4%`zA/4i!/'$T"
        keychain: "/Users/user/Desktop/apple-keychain.keychain"
        version: 512
        class: "inet"
        attributes:
            0x00000007 <blob>="twitter.com"
            0x00000008 <blob>=<NULL>
            "acct"<blob>="ostqxi"
            "atyp"<blob>="dflt"
            "cdat"<timedate>=0x32303139303431383138343433375A00  "20190418184437Z\\000"
            "crtr"<uint32>="aapl"
            "cusi"<sint32>=<NULL>
            "desc"<blob>=<NULL>
            "icmt"<blob>=<NULL>
            "invi"<sint32>=<NULL>
            "mdat"<timedate>=0x32303139303431383138343433375A00  "20190418184437Z\\000"
            "nega"<sint32>=<NULL>
            "path"<blob>=<NULL>
            "port"<uint32>=\(appleUInt32(0))
            "prot"<blob>=<NULL>
            "ptcl"<uint32>="htps"
            "scrp"<sint32>=<NULL>
            "sdmn"<blob>=<NULL>
            "srvr"<blob>="twitter.com"
            "type"<uint32>=<NULL>
        data:
        "SoNEwvU,kJ%-cIKJ9[c#S;]jB"
        keychain: "/Users/user/Desktop/apple-keychain.keychain"
        version: 256
        class: "genp"
        attributes:
            0x00000007 <blob>="dpbx@afoqwdr.tx"
            0x00000008 <blob>=<NULL>
            "acct"<blob>="dpbx"
            "cdat"<timedate>=0x32303139303431383138343633315A00  "20190418184631Z\\000"
            "svce"<blob>="dpbx@afoqwdr.tx"
            "type"<uint32>=<NULL>
        data:
        0x394B56486E783A2E535F533B6346603D434540655C707B7636  "9KVHnx:.S_S;cF`=CE@e\\134p{v6"
        keychain: "/Users/user/Desktop/apple-keychain.keychain"
        version: 256
        class: "genp"
        attributes:
            0x00000007 <blob>="note"
            0x00000008 <blob>=<NULL>
            "acct"<blob>=<NULL>
            "desc"<blob>="secure note"
            "svce"<blob>="note"
            "type"<uint32>="note"
        data:
        0x3C706C6973743E0A3C646963743E0A093C6B65793E4E4F54453C2F6B65793E0A093C737472696E673E41202271756F7465223C2F737472696E673E0A3C2F646963743E0A3C2F706C6973743E0A  "<plist>\\012<dict>\\012\\011<key>NOTE</key>\\012\\011<string>A "quote"</string>\\012</dict>\\012</plist>\\012"
        keychain: "/Users/user/Library/Keychains/login.keychain-db"
        version: 512
        class: "inet"
        attributes:
            0x00000007 <blob>="example.org (ann)"
            0x00000008 <blob>="alias"
            "acct"<blob>="ann"
            "atyp"<blob>="form"
            "crtr"<uint32>=<NULL>
            "desc"<blob>="Web form password"
            "icmt"<blob>=\(appleBuffer(Array("Zürich\nline 2".utf8)))
            "invi"<sint32>=\(appleUInt32(1))
            "nega"<sint32>=\(appleUInt32(0))
            "path"<blob>="/login"
            "port"<uint32>=\(appleUInt32(443))
            "ptcl"<uint32>="htps"
            "sdmn"<blob>=""
            "srvr"<blob>="example.org"
        data:

        keychain: "/Users/user/Library/Keychains/login.keychain-db"
        version: 512
        class: "inet"
        attributes:
            0x00000007 <blob>="intranet"
            "acct"<blob>="bob"
            "port"<uint32>=\(appleUInt32(80))
            "ptcl"<uint32>="http"
            "srvr"<blob>="intranet.example"
        data:
        \(appleBuffer([0x00, 0xFF, 0x41]))
        keychain: "/Users/user/Library/Keychains/login.keychain-db"
        version: 512
        class: \(appleUInt32(0x8000_1000))
        attributes:
            "ctyp"<uint32>=\(appleUInt32(1))
            "labl"<blob>="My Leaf"
        data:
        \(appleBuffer(certificate))
        keychain: "/Users/user/Library/Keychains/login.keychain-db"
        version: 512
        class: \(appleUInt32(0x0000_000F))
        attributes:
            0x00000001 <blob>="Key label"
        data:
        \(appleBuffer([1, 2, 3]))

        """
    }

    @Test("a dump as macOS prints it: genp and inet items with their attributes, a certificate from its data; a key skipped, alias and dates noted")
    func macDump() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let certificate = Array(try Data(contentsOf: URL(fileURLWithPath: ImportUpdateAndDeleteCertificateTests.leaf)))
        let path = sandbox.file("dump.txt")
        try Data(Self.dump(certificate: certificate).utf8).write(to: URL(fileURLWithPath: path))
        let result = try sandbox.unlocked(["import", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "7 items imported (3 generic passwords, 3 internet passwords, 1 certificate). 1 skipped (listed on stderr).\n")
        #expect(result.stderr.split(separator: "\n").map(String.init) == [
            "kcf: import: skipped item 8 at line 112 (\"Key label\"): a key: its data is wrapped by the keychain it came from; export it with `security export` and import the file",
            "kcf: import: not imported: attribute 0x00000008, in 1 item: item 5 at line 73 (\"example.org (ann)\")",
            "kcf: import: the dates of the dump (cdat, mdat) are not kept: the keychain dates the items it adds",
        ])
        let contents = try KeychainContents(sandbox)
        let mastodon = try contents.item("genericPassword", "service", "mastodon.social")
        #expect(mastodon.string("account") == "ostqxi")
        #expect(mastodon.string("label") == "mastodon.social")
        #expect(mastodon.secretText == "D<INNeT?#?Bf4%`zA/4i!/'$T")
        #expect(mastodon.attributes["creator"] == nil)

        let twitter = try contents.item("internetPassword", "server", "twitter.com")
        #expect(twitter.string("protocol") == "https")
        #expect(twitter.string("authenticationType") == "default")
        #expect(twitter.string("creator") == "aapl")
        #expect(twitter.attributes["port"] as? Int == 0)
        #expect(twitter.secretText == "SoNEwvU,kJ%-cIKJ9[c#S;]jB")

        #expect(try contents.item("genericPassword", "service", "dpbx@afoqwdr.tx").secretText == "9KVHnx:.S_S;cF`=CE@e\\p{v6")
        let note = try contents.item("genericPassword", "service", "note")
        #expect(note.string("type") == "note")
        #expect(note.secretText == "<plist>\n<dict>\n\t<key>NOTE</key>\n\t<string>A \"quote\"</string>\n</dict>\n</plist>\n")

        let form = try contents.item("internetPassword", "server", "example.org")
        #expect(form.string("authenticationType") == "html-form")
        #expect(form.attributes["port"] as? Int == 443)
        #expect(form.string("path") == "/login")
        #expect(form.string("comment") == "Zürich\nline 2")
        #expect(form.string("description") == "Web form password")
        #expect(form.attributes["isInvisible"] as? Bool == true)
        #expect(form.attributes["isNegative"] as? Bool == false)
        #expect(form.secret.isEmpty, "an empty data line is no bytes")

        let intranet = try contents.item("internetPassword", "server", "intranet.example")
        #expect(intranet.attributes["port"] as? Int == 80)
        #expect(intranet.secret == [0x00, 0xFF, 0x41])

        let leaf = try contents.item("certificate", "label", "My Leaf")
        #expect(leaf.secret == certificate)
        #expect(try sandbox.unlocked(["find-certificate", "-c", "My Leaf", "-Z"]).stdout.contains(CertificateAndDemoTests.leafSHA1))
    }

    @Test("a dump made without -d imports nothing and says how to make one")
    func dumpWithoutData() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let text = Self.dump(certificate: [0x30]).split(separator: "\n", omittingEmptySubsequences: false)
        var withoutData: [Substring] = []
        var skipNext = false
        for line in text {
            if skipNext { skipNext = false; continue }
            if line == "data:" { skipNext = true; continue }
            withoutData.append(line)
        }
        let path = sandbox.file("nodata.txt")
        try Data(withoutData.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        let result = try sandbox.unlocked(["import", path])
        #expect(result.status == 206)
        #expect(result.stderr.contains("no item has its data: make the dump with `security dump-keychain -d`"), "\(result.stderr)")
        #expect(try KeychainContents(sandbox).items.isEmpty)
    }

    /// Dumps that are not such text, each with its defect and the message kcf must give.
    static let malformed: [(defect: String, text: String, message: String)] = [
        ("hex and quoted forms that differ", item(data: "0x414243  \"ABD\""), "line 7: the hex and the quoted form of a value differ"),
        ("an odd number of hex digits", item(data: "0x41424"), "line 7: an odd number of hex digits (or none) after 0x"),
        ("a backslash without octal digits", item(data: "0x5C39  \"\\9\""), "line 7: a backslash in a quoted value is not followed by three octal digits"),
        ("a value not in quotes", item(attribute: "    \"acct\"<blob>=ann"), "line 5: not a value as security prints one: \"ann\""),
        ("a line security does not print", item(attribute: "    \"acct\"<blob>=\"ann\"\nsomething else"), "line 6: not a line of security dump-keychain output: \"something else\""),
        ("text before the first item", "hello\n" + item(), "line 1: expected \"keychain: \" to start an item"),
        ("attributes before the class", "keychain: \"k\"\nattributes:\n    \"acct\"<blob>=\"a\"\n", "line 2: attributes before the class"),
        ("an item without a class", "keychain: \"k\"\nversion: 512\nkeychain: \"k\"\n", "line 1: an item without a class line"),
        ("a tag that is not four bytes", item(attribute: "    \"acc\"<blob>=\"a\""), "line 5: expected a quote at \"<blob>=\"a\"\""),
        ("a class of three bytes", "keychain: \"k\"\nclass: 0x676E70 \n", "line 2: expected 4 bytes in hex"),
    ]

    /// One generic password, with `attribute` as its attribute lines and `data` as its data line.
    static func item(attribute: String = "    \"acct\"<blob>=\"ann\"", data: String = "\"pw\"") -> String {
        "keychain: \"/k\"\nversion: 512\nclass: \"genp\"\nattributes:\n\(attribute)\ndata:\n\(data)\n"
    }

    @Test("a dump that is not such text imports nothing: exit 206 and the line", arguments: 0..<malformed.count)
    func malformedDump(_ index: Int) throws {
        let (defect, text, message) = Self.malformed[index]
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let path = sandbox.file("bad.txt")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let result = try sandbox.unlocked(["import", "-f", "dump-keychain", path])
        #expect(result.status == 206, "\(defect): \(result.stderr)")
        #expect(result.stderr.contains(": not imported, as a security dump-keychain text: " + message), "\(defect): \(result.stderr)")
        #expect(try KeychainContents(sandbox).items.isEmpty, "\(defect)")
    }

    @Test("items of a dump that cannot be kept: a key value not UTF-8 or a code not 32 bits skips the item, a label not UTF-8 is left out; an empty dump imports nothing")
    func valuesThatDoNotFit() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let text = Self.item(attribute: "    \"acct\"<blob>=\(Self.appleBuffer([0x61, 0xFF]))")
            + Self.item(attribute: "    \"acct\"<blob>=\"b\"\n    \"crtr\"<uint32>=\"abc\"")
            + Self.item(attribute: "    0x00000007 <blob>=\(Self.appleBuffer([0xC3, 0x28]))\n    \"acct\"<blob>=\"c\"")
            + Self.item(attribute: "    \"acct\"<blob>=\"d\"\n    \"type\"<uint32>=\(Self.appleUInt32(0x6E6F7465))\n    \"svce\"<blob>=\"\(String(repeating: "s", count: 70_000))\"")
        let path = sandbox.file("odd.txt")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let result = try sandbox.unlocked(["import", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "1 item imported (1 generic password). 3 skipped (listed on stderr).\n")
        #expect(result.stderr.split(separator: "\n").map(String.init) == [
            "kcf: import: skipped item 1 at line 1: its attribute \"acct\" is not UTF-8 text",
            "kcf: import: skipped item 2 at line 8: its attribute \"crtr\" is 3 bytes, not a 32-bit value",
            "kcf: import: skipped item 4 at line 24: invalid parameter: service: 70000 bytes of UTF-8, more than 65535",
            "kcf: import: not imported: attribute 0x00000007 that is not UTF-8 text, in 1 item: item 3 at line 16 (\"\u{FFFD}(\")",
        ])
        let kept = try KeychainContents(sandbox).item("genericPassword", "account", "c")
        #expect(kept.attributes["label"] == nil)

        let empty = sandbox.file("empty.txt")
        try Data().write(to: URL(fileURLWithPath: empty))
        let nothing = try sandbox.unlocked(["import", "-f", "dump-keychain", empty])
        #expect(nothing.status == 0, "security dump-keychain of an empty keychain prints nothing: \(nothing.stderr)")
        #expect(nothing.stdout == "0 items imported.\n")
        #expect(nothing.stderr == "kcf: import: \(empty) holds no items\n")
    }

    @Test("kcf's own dump-keychain -d output imports into another keychain as the same items (but their dates)")
    func kcfDumpRoundTrip() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann \"q\" \\ z", service: "Zürich", secret: "s\\e\"c\nret", extra: ["-G", "bytes", "-C", "note", "-j", "a \\ comment"])
        #expect(try sandbox.unlocked(["add-internet-password", "-a", "bob", "-s", "example.com", "-r", "https", "-P", "8443", "-p", "/x", "-t", "html-form", "-w"],
                                     then: ["pw"]).status == 0)
        #expect(try sandbox.unlocked(["add-certificates", ImportUpdateAndDeleteCertificateTests.version1]).status == 0)
        let dump = try sandbox.unlocked(["dump-keychain", "-d", "--yes"])
        #expect(dump.status == 0)
        let path = sandbox.file("kcf-dump.txt")
        try Data(dump.stdout.utf8).write(to: URL(fileURLWithPath: path))
        let copy = sandbox.file("copy.kcf")
        try sandbox.createKeychain(at: copy)
        let result = try sandbox.unlocked(["import", "-k", copy, path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "3 items imported (1 generic password, 1 internet password, 1 certificate).\n")
        #expect(result.stderr == "kcf: import: the dates of the dump (cdat, mdat) are not kept: the keychain dates the items it adds\n")
        func withoutDates(_ contents: KeychainContents) -> [String] {
            contents.items.map { item in
                var attributes = item.attributes
                attributes["creationDate"] = nil
                attributes["modificationDate"] = nil
                let data = try? JSONSerialization.data(withJSONObject: attributes, options: [.sortedKeys])
                return item.itemClass + String(decoding: data ?? Data(), as: UTF8.self) + item.secret.description
            }.sorted()
        }
        #expect(withoutDates(try KeychainContents(sandbox, path: copy)) == withoutDates(try KeychainContents(sandbox)))
    }

    @Test("a dump of two keychains holding one item: the same imports once; different passwords import nothing (45)")
    func sameItemInTwoKeychains() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let login = Self.item().replacingOccurrences(of: "\"/k\"", with: "\"/Users/ann/Library/Keychains/login.keychain-db\"")
        let system = Self.item().replacingOccurrences(of: "\"/k\"", with: "\"/Library/Keychains/System.keychain\"")
        let same = sandbox.file("same.txt")
        try Data((login + system).utf8).write(to: URL(fileURLWithPath: same))
        let once = try sandbox.unlocked(["import", same])
        #expect(once.status == 0, "\(once.stderr)")
        #expect(once.stderr == "kcf: import: skipped item 2 at line 8: the same item as item 1 at line 1\n")
        let different = sandbox.file("different.txt")
        try Data((login + system.replacingOccurrences(of: "\"pw\"", with: "\"other\"")).utf8).write(to: URL(fileURLWithPath: different))
        let other = try KcfSandbox()
        try other.createKeychain()
        let refused = try other.unlocked(["import", different])
        #expect(refused.status == 45)
        #expect(refused.stderr.contains("item 1 at line 1 and item 2 at line 8 are one keychain item (generic password, service \"\", account \"ann\") with different contents"), "\(refused.stderr)")
    }
}
