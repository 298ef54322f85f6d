import Foundation
import Testing
@testable import KeychainFile

/// Whole version 3 files against the independent Python reader and writer (Scripts/reference/kcf_reference_v3.py,
/// written from Docs/FormatVersion3.md without the engine's sources): Swift opens, appends to and compacts the files
/// Python wrote, and Python reads every file Swift wrote, item for item, secret for secret, head for head.
@Suite("Format v3: whole files agree with the Python reference", .enabled(if: SlotsV3Script.pythonCryptography))
struct KeychainV3ReferenceTests {
    static let script = RepositoryFiles.url("Scripts/reference/kcf_reference_v3.py").path

    /// Python's dump of a version 3 file: its JSON, or the failure recorded.
    static func pythonDump(_ path: String, password: String = "correct horse battery staple") throws -> [String: Any] {
        let result = try SlotsV3Script.python([script, "dump", path, "--password", password])
        #expect(result.status == 0, "kcf_reference_v3.py dump: \(result.output)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
    }

    /// Python's items: item id → account and secret, in hex.
    static func pythonItems(_ dump: [String: Any]) -> [String: String] {
        var items: [String: String] = [:]
        for item in (dump["items"] as? [[String: Any]]) ?? [] {
            let attributes = item["attributes"] as? [String: Any]
            let account = (attributes?["account"] as? [String: Any])?["value"] as? String ?? ""
            items[item["id"] as? String ?? ""] = "\(account)=\(item["secret_hex"] as? String ?? "?")"
        }
        return items
    }

    /// Swift's items in the same form.
    static func swiftItems(_ keychain: Keychain) throws -> [String: String] {
        var items: [String: String] = [:]
        for result in try keychain.search(Query(.genericPassword, limit: .all), returning: [.attributes, .data, .persistentReference]) {
            let id = try #require(result.persistentReference?.itemID.bytes)
            var account = ""
            if case .string(let value)? = result.attributes?[.account] { account = value }
            items[HexText.lowercase(id)] = "\(account)=\(HexText.lowercase(try #require(result.value)))"
        }
        return items
    }

    static func head(_ dump: [String: Any]) -> String {
        let head = dump["head"] as? [String: Any]
        return "\(head?["sequence"] ?? "?")/\(head?["chain"] ?? "?")"
    }

    static func head(_ head: Head) -> String { "\(head.sequence)/\(HexText.lowercase(head.chainValue))" }

    @Test("Python reads what Swift wrote: adds, an update, a delete, a transaction of many pages, and a compaction")
    func pythonReadsSwift() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        _ = try V2Keychain.fill(keychain, count: 12, perBatch: 5)
        // Enough puts in one commit for several pages of the default group.
        _ = try keychain.batch { (batch) throws(KeychainError) in
            for number in 0..<400 {
                try batch.add(GenericPassword(service: "svc", account: "bulk \(number) " + String(repeating: "x", count: 40), value: [UInt8](repeating: UInt8(number & 0xFF), count: number % 7)))
            }
        }
        try keychain.update(.genericPassword(service: "svc", account: "user3"), setting: [:], secret: Array("changed".utf8))
        try keychain.delete(.genericPassword(service: "svc", account: "user4"))
        var dump = try Self.pythonDump(path)
        #expect(dump["formatVersion"] as? Int == 3)
        #expect(Self.pythonItems(dump) == (try Self.swiftItems(keychain)))
        #expect(Self.head(dump) == Self.head(keychain.head))
        #expect(try V3Keychain.log(keychain).state.replayed.groups[1]?.sequence ?? 0 > 5)

        try keychain.compact()
        try keychain.add(GenericPassword(service: "svc", account: "after compaction", password: "y"))
        dump = try Self.pythonDump(path)
        #expect(dump["epoch"] as? Int == 2)
        #expect(Self.pythonItems(dump) == (try Self.swiftItems(keychain)))
        #expect(Self.head(dump) == Self.head(keychain.head))
        #expect((dump["tombstones"] as? [Any])?.count == 1)
    }

    @Test("Python reads a file whose header runs take two pages")
    func pythonReadsTwoPages() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let (keychain, _) = try KeychainV3MultiPageTests.manySlots(in: directory)
        _ = try V2Keychain.fill(keychain, count: 8, perBatch: 3)
        let dump = try Self.pythonDump(path)
        #expect(dump["page_count"] as? Int == 2)
        #expect(Self.pythonItems(dump) == (try Self.swiftItems(keychain)))
        #expect(Self.head(dump) == Self.head(keychain.head))
    }

    @Test("Swift opens what Python wrote, one commit per item and one transaction, appends and compacts, and Python reads it back")
    func swiftReadsPython() throws {
        let directory = TemporaryDirectory()
        for transaction in [false, true] {
            let path = directory.file("python-\(transaction).kcf")
            var items: [[String: Any]] = []
            for number in 0..<25 {
                items.append([
                    "class": "genericPassword", "attributes": ["service": "svc", "account": "py\(number)"],
                    "secret": HexText.lowercase(Array("python secret \(number)".utf8)),
                ])
            }
            let json = String(decoding: try JSONSerialization.data(withJSONObject: items), as: UTF8.self)
            let made = try SlotsV3Script.python(
                [Self.script, "make", path, "--password", "correct horse battery staple", "--iterations", "1000", "--items", json]
                    + (transaction ? ["--transaction"] : []))
            #expect(made.status == 0, "kcf_reference_v3.py make: \(made.output)")
            let keychain = try V3Keychain.open(path)
            #expect(keychain.fileFormatVersion == 3)
            #expect(try Self.swiftItems(keychain) == Self.pythonItems(try Self.pythonDump(path)))
            #expect(keychain.count == 25)
            #expect(keychain.tornTail == nil && keychain.repairs.isEmpty)
            try keychain.add(GenericPassword(service: "svc", account: "from swift", password: "s"))
            try keychain.delete(.genericPassword(service: "svc", account: "py0"))
            var dump = try Self.pythonDump(path)
            #expect(Self.pythonItems(dump) == (try Self.swiftItems(keychain)))
            #expect(Self.head(dump) == Self.head(keychain.head))
            try keychain.compact()
            dump = try Self.pythonDump(path)
            #expect(Self.pythonItems(dump) == (try Self.swiftItems(keychain)))
            #expect(try Self.swiftItems(V3Keychain.open(path)) == Self.swiftItems(keychain))
        }
    }
}

/// Items in their access groups (Docs/FormatVersion3.md §2.11), both ways.
@Suite("Format v3: access groups agree with the Python reference", .enabled(if: SlotsV3Script.pythonCryptography))
struct KeychainV3GroupReferenceTests {
    /// Python's items: item id → "group/key id".
    static func pythonGroups(_ dump: [String: Any]) -> [String: String] {
        var groups: [String: String] = [:]
        for item in (dump["items"] as? [[String: Any]]) ?? [] {
            groups[item["id"] as? String ?? ""] = "\(item["group"] as? String ?? "?")/\(item["keyID"] as? Int ?? -1)"
        }
        return groups
    }

    /// Swift's items in the same form.
    static func swiftGroups(_ keychain: Keychain) throws -> [String: String] {
        let log = try V3Keychain.log(keychain)
        var groups: [String: String] = [:]
        for result in try keychain.search(Query(.genericPassword, limit: .all), returning: [.attributes, .persistentReference]) {
            let id = try #require(result.persistentReference?.itemID.bytes)
            let name = AccessGroupsV3.name(of: try #require(result.attributes))
            groups[HexText.lowercase(id)] = "\(name)/\(log.state.groups.keyID(named: name).map(Int.init) ?? -1)"
        }
        return groups
    }

    static func pythonTombstones(_ dump: [String: Any]) -> [String: Int] {
        var tombstones: [String: Int] = [:]
        for tombstone in (dump["tombstones"] as? [[String: Any]]) ?? [] {
            tombstones[tombstone["id"] as? String ?? ""] = tombstone["keyID"] as? Int ?? -1
        }
        return tombstones
    }

    static func swiftTombstones(_ keychain: Keychain) throws -> [String: Int] {
        let log = try V3Keychain.log(keychain)
        var tombstones: [String: Int] = [:]
        // A moved item's deletion leaves a tombstone in its old group while the item lives on in the new one; a put
        // does not clear it (SPEC.md §24.4) and both readers keep it until a rewrite drops it.
        for id in log.state.replayed.tombstones.keys {
            tombstones[HexText.lowercase(id.bytes)] = Int(log.state.replayed.tombstoneGroups[id] ?? 0)
        }
        return tombstones
    }

    static func agree(_ keychain: Keychain, path: String, _ comment: Comment) throws {
        let dump = try KeychainV3ReferenceTests.pythonDump(path)
        #expect(KeychainV3ReferenceTests.pythonItems(dump) == (try KeychainV3ReferenceTests.swiftItems(keychain)), comment)
        #expect(Self.pythonGroups(dump) == (try Self.swiftGroups(keychain)), comment)
        #expect(Self.pythonTombstones(dump) == (try Self.swiftTombstones(keychain)), comment)
        #expect(KeychainV3ReferenceTests.head(dump) == KeychainV3ReferenceTests.head(keychain.head), comment)
    }

    @Test("Python reads Swift's groups: items in three groups, a group added, a move, a deletion, a compaction")
    func pythonReadsSwiftGroups() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        try KeychainV3GroupTests.add(keychain, group: "", count: 3)
        try KeychainV3GroupTests.add(keychain, group: KeychainV3GroupTests.groupA, count: 3)
        // One batch naming a new group and an old one, interleaved: segments follow the batch's order.
        try keychain.batch { (batch) throws(KeychainError) in
            for number in 0..<4 {
                let group = number.isMultiple(of: 2) ? KeychainV3GroupTests.groupB : KeychainV3GroupTests.groupA
                try batch.add(GenericPassword(service: "svc", account: "mixed \(number)", password: "m\(number)", accessGroup: group))
            }
        }
        try Self.agree(keychain, path: path, "after three groups")
        try keychain.update(.genericPassword(service: "svc", account: "\(KeychainV3GroupTests.groupA)-1"), setting: [.accessGroup: .string(KeychainV3GroupTests.groupB)])
        try keychain.delete(.genericPassword(service: "svc", account: "\(KeychainV3GroupTests.groupA)-2"))
        try Self.agree(keychain, path: path, "after a move and a deletion")
        try keychain.compact()
        try Self.agree(keychain, path: path, "after a compaction")
        #expect((try KeychainV3ReferenceTests.pythonDump(path)["groups"] as? [Any])?.count == 3)
    }

    @Test("Swift opens Python's groups, adds a group and moves an item, and Python reads it back")
    func swiftReadsPythonGroups() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("python.kcf")
        var items: [[String: Any]] = []
        for number in 0..<9 {
            var attributes: [String: Any] = ["service": "svc", "account": "py\(number)"]
            if number % 3 != 0 { attributes["accessGroup"] = number % 3 == 1 ? "python.a" : "python.b" }
            items.append(["class": "genericPassword", "attributes": attributes, "secret": HexText.lowercase(Array("python secret \(number)".utf8))])
        }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: items), as: UTF8.self)
        let made = try SlotsV3Script.python(
            [KeychainV3ReferenceTests.script, "make", path, "--password", "correct horse battery staple", "--iterations", "1000", "--items", json])
        #expect(made.status == 0, "kcf_reference_v3.py make: \(made.output)")
        let keychain = try V3Keychain.open(path)
        #expect(try V3Keychain.log(keychain).state.groups.table?.groups.map(\.name).sorted() == ["", "python.a", "python.b"])
        try Self.agree(keychain, path: path, "as Python wrote it")
        try keychain.add(GenericPassword(service: "svc", account: "swift", password: "s", accessGroup: "swift.c"))
        try keychain.update(.genericPassword(service: "svc", account: "py1"), setting: [.accessGroup: .string("swift.c")])
        try keychain.delete(.genericPassword(service: "svc", account: "py2"))
        try Self.agree(keychain, path: path, "after Swift's writes")
        try keychain.compact()
        try Self.agree(keychain, path: path, "after Swift's compaction")
    }
}
