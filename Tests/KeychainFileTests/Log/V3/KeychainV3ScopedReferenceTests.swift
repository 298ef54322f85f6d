import Foundation
import Testing
@testable import KeychainFile

/// Scoped appends against the independent Python reference (Scripts/reference/kcf_reference_v3.py, written from
/// Docs/FormatVersion3.md §2.6 without the engine's sources): each reads, with a full credential and with the other
/// group's scoped one, what the other's scoped holder appended.
@Suite("Format v3: scoped appends and rewrites agree with the Python reference", .enabled(if: SlotsV3Script.pythonCryptography))
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

    @Test("Python reads, whole and as B's holder, what Swift's holder of A compacted, with the same chain starts")
    func pythonReadsSwiftScopedCompaction() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try KeychainV3ScopedRewriteTests.churned(in: directory)
        let viewA = try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA)
        try viewA.compact()
        try full.refresh()
        let dump = try KeychainV3ReferenceTests.pythonDump(path)
        #expect(KeychainV3ReferenceTests.pythonItems(dump) == (try KeychainV3ReferenceTests.swiftItems(full)))
        #expect(KeychainV3ReferenceTests.head(dump) == KeychainV3ReferenceTests.head(full.head))
        let starts = (dump["chain_starts"] as? [[String: Any]] ?? []).map { "\($0["keyID"] ?? "?")@\($0["startEpoch"] ?? "?")" }
        let header = try KeychainV3ScopedRewriteTests.header(path)
        #expect(!header.chainStarts.isEmpty)
        #expect(starts == header.chainStarts.map { "\($0.keyID)@\($0.startEpoch)" })
        let dumpB = try KeychainV3ReferenceTests.pythonDump(path, password: "scoped to group b")
        let viewB = try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedB)
        #expect(KeychainV3ReferenceTests.pythonItems(dumpB) == (try KeychainV3ReferenceTests.swiftItems(viewB)))
        #expect(KeychainV3ReferenceTests.pythonItems(dumpB).count == 4)
    }

    @Test("Swift reads, whole and as each group's holder, what Python's holder of A compacted: the other groups' segments copied byte for byte")
    func swiftReadsPythonScopedCompaction() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try KeychainV3ScopedRewriteTests.churned(in: directory)
        let everything = try KeychainV3ScopedWriteTests.snapshot(full)
        let copied = try KeychainV3ScopedRewriteTests.copiedSegments(path)
        let epoch = try KeychainV3ScopedRewriteTests.header(path).epoch
        let result = try SlotsV3Script.python([Self.script, "compact", path, "--password", "scoped to group a"])
        #expect(result.status == 0, "compact: \(result.output)")
        let header = try KeychainV3ScopedRewriteTests.header(path)
        #expect(header.epoch == epoch + 1)
        #expect(header.chainStarts.map(\.keyID).count == 2)
        let same = try KeychainV3ScopedRewriteTests.copiedSegments(path) == copied
        #expect(same, "Python's copies differ from the segments before")
        #expect(try KeychainV3ScopedWriteTests.snapshot(V3Keychain.open(path)) == everything)
        try full.refresh()
        #expect(try KeychainV3ScopedWriteTests.snapshot(full) == everything)
        let groupB = KeychainV3ScopedWriteTests.groupB, groupA = KeychainV3ScopedWriteTests.groupA
        #expect(try KeychainV3ScopedWriteTests.snapshot(V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedB))
            == everything.filter { $0.hasPrefix("\(groupB)|") })
        #expect(try KeychainV3ScopedWriteTests.snapshot(V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA))
            == everything.filter { $0.hasPrefix("\(groupA)|") })
        // And writes on it: B's holder appends, a full holder reads it.
        try KeychainV3GroupTests.add(V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedB), group: groupB, count: 1, from: 60)
        #expect(try V3Keychain.open(path).count == everything.count + 1)
    }
}
