import Foundation
import Testing
@_spi(FormatVersion2) @testable import KeychainFile
import KeychainCrypto

/// Opens the format version 2 files the independent Python writer wrote (`Fixtures/v2/reference-*.kcf`, written by
/// `python3 Scripts/reference/check_fixtures.py --write-reference Fixtures/v2` from Docs/FormatVersion2.md without
/// the Swift sources) and compares each with its manifest; then appends to a copy and reads it back, so Swift also
/// writes over the bytes another implementation wrote.
@Suite("Conformance: the Python reference writer's version 2 files (Fixtures/v2/reference-*)")
struct ReferenceV2ConformanceTests {
    static let directory = RepositoryFiles.fixtures.appendingPathComponent("v2")

    static var names: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasPrefix("reference-") && $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }

    @Test("The reference writer's files are there")
    func present() {
        #expect(Self.names.count >= 9, "run python3 Scripts/reference/check_fixtures.py --write-reference Fixtures/v2")
    }

    @Test("Each reference file opens as its manifest says, and takes an add", arguments: names)
    func reference(name: String) throws {
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: Self.directory.appendingPathComponent("\(name).json"))) as? [String: Any])
        #expect(manifest["formatVersion"] as? Int == 2)
        let credentialObject = try #require(manifest["credential"] as? [String: Any])
        let credential: Credential
        if let password = credentialObject["password"] as? String {
            credential = .password(password)
        } else {
            credential = .key(SymmetricKey(data: try hex(try #require(credentialObject["key"] as? String))))
        }
        let expect = try #require(manifest["expect"] as? [String: Any])
        #expect(expect["outcome"] as? String == "opens")
        let scratch = TemporaryDirectory()
        let path = scratch.file("\(name).kcf")
        try FileManager.default.copyItem(atPath: Self.directory.appendingPathComponent("\(name).kcf").path, toPath: path)
        let keychain = try Keychain.open(at: path, credential: credential)

        #expect(keychain.count == expect["itemCount"] as? Int, "\(name) item count")
        let head = try #require(expect["head"] as? [String: Any])
        #expect(keychain.head.sequence == UInt64(try #require(head["sequence"] as? Int)), "\(name) head sequence")
        #expect(keychain.head.chainValue == (try hex(try #require(head["chainValue"] as? String))), "\(name) chain value")
        if let torn = expect["tornTail"] as? [String: Any] {
            #expect(keychain.tornTail?.offset == torn["offset"] as? Int, "\(name) torn tail offset")
            #expect(keychain.tornTail?.mayHoldAcknowledgedData == torn["mayHoldAcknowledgedData"] as? Bool, "\(name) torn tail kind")
        } else {
            #expect(keychain.tornTail == nil, "\(name) has no torn tail")
        }
        #expect(keychain.repairs.isEmpty == !(try #require(expect["repaired"] as? Bool)), "\(name) repairs: \(keychain.repairs)")
        let found = try Self.everything(in: keychain)
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
            var actual: [String: String] = [:]
            for (attribute, value) in attributes { actual[attribute.name] = describe(value) }
            var wanted: [String: String] = [:]
            for (attributeName, typed) in try #require(item["attributes"] as? [String: [String: Any]]) {
                let (type, value) = try #require(typed.first)
                wanted[attributeName] = "\(type):\(value)"
            }
            #expect(actual == wanted, "\(name) \(id) attributes")
        }

        // Swift appends to the reference writer's file (cutting a remnant or an undone transaction first, writing
        // back what it repaired), and reads everything back.
        try keychain.add(GenericPassword(service: "ReferenceV2ConformanceTests", account: name, password: "appended"))
        let reopened = try Keychain.open(at: path, credential: credential)
        #expect(reopened.count == items.count + 1, "\(name) after an add")
        #expect(reopened.head.sequence == keychain.head.sequence, "\(name) head after an add")
        #expect(reopened.tornTail == nil && reopened.repairs.isEmpty, "\(name) after an add: \(reopened.repairs)")
        #expect(try Self.everything(in: reopened).count == items.count + 1)
    }

    static func everything(in keychain: Keychain) throws -> [String: (ItemClass, ItemAttributes, [UInt8])] {
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
        return found
    }
}
