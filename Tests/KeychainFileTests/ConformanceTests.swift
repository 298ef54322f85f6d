import Foundation
import Testing
@testable import KeychainFile
import KeychainCrypto
import KeychainFileFixtures

/// Runs Fixtures/v1, v2 and v3 as the conformance suite Fixtures/README.md describes, and checks that the
/// generator reproduces every fixture byte for byte. The `reference-*` files of v2 and v3 were written by the
/// independent Python implementation (Scripts/reference), not by this library's generator.
@Suite("Conformance fixtures (Fixtures/v1, v2, v3)")
struct ConformanceTests {
    static let fixtures = RepositoryFiles.fixtures

    /// The manifests of `Fixtures/<version>`, without their suffix.
    static func manifestNames(_ version: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: fixtures.appendingPathComponent(version).path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// Every fixture of both versions, as `v1/NAME`.
    static var allFixtures: [String] {
        ["v1", "v2", "v3"].flatMap { version in manifestNames(version).map { "\(version)/\($0)" } }
    }

    @Test("Every fixture in the catalogue has a file and a manifest", arguments: [1, 2, 3])
    func catalogueComplete(formatVersion: Int) {
        let generated = Self.manifestNames("v\(formatVersion)").filter { !$0.hasPrefix("reference-") }
        #expect(generated == FixtureGenerator.names(formatVersion: formatVersion).sorted())
        #expect(generated.count >= 24)
    }

    @Test("Each fixture reads exactly as its manifest says", arguments: allFixtures)
    func fixture(name: String) throws {
        let manifestURL = Self.fixtures.appendingPathComponent("\(name).json")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        try Self.check(name: name, credentialObject: try #require(manifest["credential"] as? [String: Any]),
                       scope: manifest["scope"], expect: try #require(manifest["expect"] as? [String: Any]))
        // Format version 3: every other credential of the file, each with what it must see.
        for (index, other) in ((manifest["otherCredentials"] as? [[String: Any]]) ?? []).enumerated() {
            try Self.check(name: "\(name), other credential \(index)", credentialObject: try #require(other["credential"] as? [String: Any]),
                           scope: other["scope"], expect: try #require(other["expect"] as? [String: Any]))
        }
        // Format version 3, optional: heads pinned at an open (SPEC.md §15.4, §37.5), each with its outcome.
        for (index, pin) in ((manifest["pins"] as? [[String: Any]]) ?? []).enumerated() {
            try Self.checkPin(name: "\(name), pin \(index)", pin: pin)
        }
    }

    /// Opens a copy of the fixture with the pin's credential and head, and compares the outcome (`opens` or
    /// `rolledBack`) with the pin's.
    static func checkPin(name: String, pin: [String: Any]) throws {
        let fixtureName = name.components(separatedBy: ",")[0]
        let credential = try Self.credential(try #require(pin["credential"] as? [String: Any]))
        let head = try Head(try #require(pin["head"] as? String))
        let directory = TemporaryDirectory()
        let path = directory.file("fixture.kcf")
        try FileManager.default.copyItem(atPath: Self.fixtures.appendingPathComponent("\(fixtureName).kcf").path, toPath: path)
        let outcome = Result { () throws(KeychainError) in try Keychain.open(at: path, credential: credential, options: .init(expectedHead: head)) }
        switch (pin["outcome"] as? String, outcome) {
        case ("opens", .success), ("rolledBack", .failure(.rolledBack(_, _))): break
        case (let expected, let got):
            Issue.record("\(name): expected \(expected ?? "?") with the head \(head), got \(got)")
        }
    }

    static func credential(_ object: [String: Any]) throws -> Credential {
        if let password = object["password"] as? String { return .password(password) }
        return .key(SymmetricKey(data: try hex(try #require(object["key"] as? String))))
    }

    /// Opens a copy of the fixture with one credential and compares what it finds with `expect`; `scope` is the
    /// manifest's (format version 3: `NSNull` for a full credential, or the groups it reaches).
    static func check(name: String, credentialObject: [String: Any], scope: Any?, expect: [String: Any]) throws {
        let fixtureName = name.components(separatedBy: ",")[0]
        let credential = try Self.credential(credentialObject)
        // Opened from a copy: opening creates a lock file beside the keychain (SPEC.md §16), which does not
        // belong in Fixtures/.
        let directory = TemporaryDirectory()
        let path = directory.file("fixture.kcf")
        try FileManager.default.copyItem(atPath: Self.fixtures.appendingPathComponent("\(fixtureName).kcf").path, toPath: path)
        let outcome = Result { () throws(KeychainError) in try Keychain.open(at: path, credential: credential) }

        switch (expect["outcome"] as? String, outcome) {
        case ("opens", .success(let keychain)):
            try Self.compare(keychain, with: expect, name: name)
            if let scope {
                try Self.compareVersion3(keychain, scope: scope, with: expect, name: name)
            }
        case ("fails", .failure(let error)):
            switch (expect["error"] as? String, error) {
            case ("wrongCredentials", .wrongCredentials), ("notAKeychain", .notAKeychain): break
            case ("unsupportedVersion", .unsupportedVersion(let version)):
                #expect(version == expect["version"] as? Int, "\(name)")
            case ("corrupted", .corrupted(let offset, _)):
                if let range = expect["errorOffsetRange"] as? [Int] {
                    #expect((range[0]..<range[1]).contains(offset), "\(name): reported offset \(offset), expected within \(range)")
                }
            default:
                Issue.record("\(name): expected \(expect["error"] ?? "?"), got \(error)")
            }
        case (let expected, let got):
            Issue.record("\(name): expected outcome \(expected ?? "?"), got \(got)")
        }
    }

    static func compare(_ keychain: Keychain, with expect: [String: Any], name: String) throws {
        #expect(keychain.count == expect["itemCount"] as? Int, "\(name) item count")
        let head = try #require(expect["head"] as? [String: Any])
        #expect(keychain.head.sequence == UInt64(try #require(head["sequence"] as? Int)), "\(name) head sequence")
        #expect(keychain.head.chainValue == (try hex(try #require(head["chainValue"] as? String))), "\(name) chain value")
        if let torn = expect["tornTail"] as? [String: Any] {
            #expect(keychain.tornTail?.offset == torn["offset"] as? Int, "\(name) torn tail offset")
            if let byteCount = torn["byteCount"] as? Int {
                #expect(keychain.tornTail?.byteCount == byteCount, "\(name) torn tail size")
            }
            if let acknowledged = torn["mayHoldAcknowledgedData"] as? Bool {
                #expect(keychain.tornTail?.mayHoldAcknowledgedData == acknowledged, "\(name) torn tail may hold acknowledged data")
            }
        } else {
            #expect(keychain.tornTail == nil, "\(name) has no torn tail")
        }

        if let repaired = expect["repaired"] as? Bool {
            #expect(keychain.repairs.isEmpty == !repaired, "\(name) repairs: \(keychain.repairs)")
        }

        // Everything the keychain holds, by item id.
        var found: [String: (ItemClass, ItemAttributes, [UInt8])] = [:]
        for queryClass in [QueryClass.genericPassword, .internetPassword, .certificate, .key] {
            var query = Query(queryClass)
            query.synchronizable = .any
            guard let results = try? keychain.search(query, returning: [.attributes, .data, .persistentReference]) else { continue }
            for result in results {
                let attributes = try #require(result.attributes)
                found[(try #require(result.persistentReference).itemID.bytes).hexString] =
                    (attributes.itemClass, attributes, try #require(result.value))
            }
        }
        let items = try #require(expect["items"] as? [[String: Any]])
        #expect(found.count == items.count, "\(name) items")
        for item in items {
            let id = try #require(item["id"] as? String)
            guard let (itemClass, attributes, secret) = found[id] else {
                Issue.record("\(name): item \(id) is missing")
                continue
            }
            #expect(itemClassName(itemClass) == item["class"] as? String, "\(name) \(id) class")
            #expect(secret.hexString == item["secret"] as? String, "\(name) \(id) secret")
            let expectedAttributes = try #require(item["attributes"] as? [String: [String: Any]])
            var actual: [String: String] = [:]
            for (attribute, value) in attributes { actual[attribute.name] = describe(value) }
            var wanted: [String: String] = [:]
            for (attributeName, typed) in expectedAttributes {
                let (type, value) = try #require(typed.first)
                wanted[attributeName] = "\(type):\(value)"
            }
            #expect(actual == wanted, "\(name) \(id) attributes")
        }
    }

    /// Version 3's fields: what the credential reaches, the groups it sees, and every group's head.
    static func compareVersion3(_ keychain: Keychain, scope: Any, with expect: [String: Any], name: String) throws {
        if let groups = scope as? [String] {
            #expect(keychain.scope.accessGroups?.sorted() == groups, "\(name) scope")
        } else {
            #expect(scope is NSNull, "\(name): scope is null or a list of groups")
            #expect(keychain.scope == .full, "\(name) scope")
        }
        let log = try V3Keychain.log(keychain)
        #expect(log.state.groups.names.values.sorted() == (expect["groups"] as? [String]), "\(name) groups")
        let heads = try #require(expect["groupHeads"] as? [[String: Any]], "\(name) groupHeads")
        #expect(keychain.head.groups.map { "\($0.keyID).\($0.startEpoch).\($0.sequence).\($0.lastTag.hexString)" }
                == heads.map { "\($0["keyID"] ?? "").\($0["startEpoch"] ?? "").\($0["sequence"] ?? "").\($0["lastTag"] ?? "")" },
                "\(name) group heads")
        // Optional: every tombstone, with its time and group; a moved item's deletion in its old group is not one.
        if let tombstones = expect["tombstones"] as? [[String: Any]] {
            var found: [String] = []
            for (id, time) in log.state.replayed.tombstones where keychain.withLock({ keychain.index[id] }) == nil {
                let group = log.state.replayed.tombstoneGroups[id].flatMap { log.state.groups.names[$0] } ?? "?"
                found.append("\(id.bytes.hexString).\(time).\(group)")
            }
            #expect(found.sorted() == tombstones.map { "\($0["id"] ?? "").\($0["time"] ?? "").\($0["group"] ?? "")" }, "\(name) tombstones")
        }
    }

    @Test("Regenerating the fixtures writes byte-identical files", arguments: [1, 2, 3])
    func reproducible(formatVersion: Int) throws {
        let scratch = NSTemporaryDirectory() + "kcf-fixtures-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try FixtureGenerator.writeAll(
            into: scratch, certificates: Self.fixtures.appendingPathComponent("certificates").path, formatVersion: formatVersion)
        let written = try FileManager.default.contentsOfDirectory(atPath: scratch).sorted()
        #expect(written.count == 2 * FixtureGenerator.names(formatVersion: formatVersion).count)
        for file in written {
            let fresh = try Data(contentsOf: URL(fileURLWithPath: scratch + "/" + file))
            let committed = try Data(contentsOf: Self.fixtures.appendingPathComponent("v\(formatVersion)/" + file))
            #expect(fresh == committed, "\(file) differs from the committed fixture")
        }
    }
}

/// An attribute value as the manifests of Fixtures/ write it, `type:value`.
func describe(_ value: AttributeValue) -> String {
    switch value {
    case .string(let text): return "string:\(text)"
    case .bytes(let bytes): return "bytes:\(bytes.hexString)"
    case .integer(let number): return "integer:\(number)"
    case .boolean(let flag): return "boolean:\(flag ? 1 : 0)"
    case .date: return "date:\(value.millisecondsSince1970 ?? 0)"
    }
}

/// A class as the manifests of Fixtures/ name it.
func itemClassName(_ itemClass: ItemClass) -> String {
    switch itemClass {
    case .genericPassword: return "genericPassword"
    case .internetPassword: return "internetPassword"
    case .certificate: return "certificate"
    case .key: return "key"
    }
}

