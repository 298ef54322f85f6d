import Foundation
import Testing
@testable import KeychainFile
import KeychainCrypto

/// Opens the format version 2 files the independent Python writer wrote (`Fixtures/v2/reference-*.kcf`, written by
/// `python3 Scripts/reference/check_fixtures.py --write-reference Fixtures/v2` from Docs/FormatVersion2.md without
/// the Swift sources) and checks each against its manifest; then appends to a copy and reads it back, so Swift also
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

        // The manifest as every fixture's is compared (ConformanceTests runs it too; here it is the state the add
        // below starts from).
        try ConformanceTests.compare(keychain, with: expect, name: name)
        let itemCount = try #require(expect["itemCount"] as? Int)

        // Swift appends to the reference writer's file (cutting a remnant or an undone transaction first, writing
        // back what it repaired), and reads everything back.
        try keychain.add(GenericPassword(service: "ReferenceV2ConformanceTests", account: name, password: "appended"))
        let reopened = try Keychain.open(at: path, credential: credential)
        #expect(reopened.count == itemCount + 1, "\(name) after an add")
        #expect(reopened.head.sequence == keychain.head.sequence, "\(name) head after an add")
        #expect(reopened.tornTail == nil && reopened.repairs.isEmpty, "\(name) after an add: \(reopened.repairs)")
        #expect(try liveSecrets(reopened, service: "ReferenceV2ConformanceTests") == [name: Array("appended".utf8)])
    }
}
