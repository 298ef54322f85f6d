import Foundation
import Testing
@testable import KeychainFile

/// Scoped appends against the independent Python reference (Scripts/reference/kcf_reference_v3.py, written from
/// Docs/FormatVersion3.md §2.6 without the engine's sources): each reads, with a full credential and with the other
/// group's scoped one, what the other's scoped holder appended.
@Suite("Format v3: scoped appends agree with the Python reference", .enabled(if: SlotsV3Script.pythonCryptography))
struct KeychainV3ScopedReferenceTests {
    static let script = KeychainV3ReferenceTests.script

    @Test("Python reads, whole and as B's holder, what Swift's holder of A appended")
    func pythonReadsSwiftScopedAppends() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try KeychainV3ScopedWriteTests.keychain(in: directory)
        let viewA = try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA)
        try KeychainV3GroupTests.add(viewA, group: KeychainV3ScopedWriteTests.groupA, count: 2, from: 10)
        try viewA.delete(.genericPassword(service: "svc", account: "\(KeychainV3ScopedWriteTests.groupA)-0"))
        try full.refresh()
        let dump = try KeychainV3ReferenceTests.pythonDump(path)
        #expect(KeychainV3ReferenceTests.pythonItems(dump) == (try KeychainV3ReferenceTests.swiftItems(full)))
        #expect(KeychainV3ReferenceTests.head(dump) == KeychainV3ReferenceTests.head(full.head))
        let dumpB = try KeychainV3ReferenceTests.pythonDump(path, password: "scoped to group b")
        let viewB = try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedB)
        #expect(KeychainV3ReferenceTests.pythonItems(dumpB) == (try KeychainV3ReferenceTests.swiftItems(viewB)))
        #expect(KeychainV3ReferenceTests.pythonItems(dumpB).count == 5)
    }

    @Test("Swift reads, whole and as B's holder, what Python's holder of A appended; Python refuses A's holder an item of B")
    func swiftReadsPythonScopedAppends() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try KeychainV3ScopedWriteTests.keychain(in: directory)
        let secrets = ["73637a", "6f6e65206d6f7265"]
        let items = secrets.enumerated().map { (number, secret) in
            "{\"class\": \"genericPassword\", \"attributes\": {\"service\": \"py\", \"account\": \"p\(number)\", \"accessGroup\": \"\(KeychainV3ScopedWriteTests.groupA)\"}, \"secret\": \"\(secret)\"}"
        }
        let result = try SlotsV3Script.python([
            Self.script, "append-scoped", path, "--password", "scoped to group a", "--transaction", "--items", "[\(items.joined(separator: ", "))]",
        ])
        #expect(result.status == 0, "append-scoped: \(result.output)")
        try full.refresh()
        #expect(full.count == 14)
        #expect(try full.search(.genericPassword(service: "py", account: "p1"), returning: .data).first?.value == [UInt8]("one more".utf8))
        #expect(try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedB).count == 5)
        #expect(try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA).count == 6)
        // An item of B, asked of A's holder: refused (exit 9), nothing written.
        let before = try fileBytes(path)
        let refused = try SlotsV3Script.python([
            Self.script, "append-scoped", path, "--password", "scoped to group a", "--items",
            "[{\"class\": \"genericPassword\", \"attributes\": {\"account\": \"x\", \"accessGroup\": \"\(KeychainV3ScopedWriteTests.groupB)\"}, \"secret\": \"78\"}]",
        ])
        #expect(refused.status == 9, "\(refused.output)")
        #expect(try fileBytes(path) == before)
    }
}
