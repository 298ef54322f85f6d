import Foundation
import Testing
@testable import KeychainFile

/// Review of format version 3's engine (helper-43): attacks on the engine that it withstood. Kept as regression
/// tests of the rules they check; each names what it would catch.
@Suite("Review v3: attacks the engine withstands")
struct V3EngineReviewProbeTests {
    static func item(_ name: String, _ secret: [UInt8]) -> GenericPassword {
        GenericPassword(service: "svc", account: name, value: secret)
    }

    /// A writer's own sealed secrets (``RecordLogV3/sealedSecrets(of:entries:)``: boxes mapped to puts across pages,
    /// segments and parts) are the ones in the file: read back by the writer, after its compaction, and reopened.
    @Test("Secret boxes map to their puts across pages and parts: empty secrets, deletions between puts, 1 MiB secrets")
    func sealedSecretsAcrossPagesAndParts() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        var expected = try V2Keychain.fill(keychain, count: 40, perBatch: 40)
        // One commit of many pages: puts of empty and short secrets, deletions of earlier items between them.
        try keychain.batch { (batch) throws(KeychainError) in
            for number in 0..<300 {
                if number % 9 == 4, number / 9 < 40 {
                    _ = try batch.delete(.genericPassword(service: "svc", account: "user\(number / 9)"))
                    expected["user\(number / 9)"] = nil
                }
                let secret: [UInt8] = number % 3 == 0 ? [] : Array("s\(number)".utf8)
                try batch.add(Self.item("page\(number)", secret))
                expected["page\(number)"] = secret
            }
        }
        #expect(try liveSecrets(keychain) == expected)
        // A transaction in parts: 1 MiB secrets, empty ones and deletions interleaved.
        try keychain.batch { (batch) throws(KeychainError) in
            for number in 0..<18 {
                let big = [UInt8](repeating: UInt8(number), count: 1 << 20)
                try batch.add(Self.item("big\(number)", big))
                expected["big\(number)"] = big
                try batch.add(Self.item("empty\(number)", []))
                expected["empty\(number)"] = []
                _ = try batch.delete(.genericPassword(service: "svc", account: "page\(number * 7)"))
                expected["page\(number * 7)"] = nil
            }
        }
        let writerView = try liveSecrets(keychain) == expected
        #expect(writerView, "the writer reads other secrets than it wrote")
        try keychain.compact()
        let compactedView = try liveSecrets(keychain) == expected
        #expect(compactedView, "the writer reads other secrets after compacting")
        let reopenedView = try liveSecrets(V3Keychain.open(path)) == expected
        #expect(reopenedView, "the file holds other secrets than were written")
    }

    /// Cut at every record boundary and one byte either side: the file opens with every item, or refuses, or says
    /// that its newest commit may be lost and refuses writes — never opens silently with fewer items. The newest
    /// record is larger than parity rebuilds when it is missing (SPEC.md §25.5), so that a cut before it is set aside.
    @Test("A version 3 file cut anywhere near a record boundary never opens silently with fewer items")
    func truncationAtEveryBoundary() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        var expected = try V2Keychain.fill(keychain, count: 5, perBatch: 1, secretSize: 2_000)
        let large = [UInt8](repeating: 0x5A, count: 20_000)
        try keychain.add(Self.item("large", large))
        expected["large"] = large
        var setAside = 0
        let log = try V3Keychain.log(keychain)
        let pristine = try fileBytes(path)
        // Each record's end, read with the codec alone.
        var ends: [Int] = [32_768]
        var offset = 32_768
        var chain = log.state.header.initialChainValue(headerKey: log.state.logKeys.header)
        while offset < pristine.count {
            let record = try RecordV3Decoder.decode(pristine, at: offset, previousChain: chain, keys: log.state.keys)
            chain = record.chainTag
            offset = record.end
            ends.append(offset)
        }
        #expect(ends.count == 8, "the log's start, the creation commit's end and the six adds'")
        for end in ends.dropLast() {
            for cut in [end - 1, end, end + 1] {
                try writeFileBytes(Array(pristine[0..<cut]), to: path)
                let opened: Keychain
                do {
                    opened = try V3Keychain.open(path)
                } catch {
                    continue
                }
                let live = try liveSecrets(opened)
                if live == expected { continue }
                let tail = try #require(opened.tornTail, "cut at \(cut): opened with \(live.count) of \(expected.count) items and no torn tail")
                #expect(tail.mayHoldAcknowledgedData, "cut at \(cut): fewer items, and a tail said to be droppable")
                setAside += 1
                #expect(throws: KeychainError.self, "cut at \(cut): a write went on over a possibly acknowledged commit") {
                    try opened.add(GenericPassword(service: "svc", account: "after", password: "x"))
                }
            }
        }
        // The cut before the newest record, at least, opens with it set aside (the branch above is reached).
        #expect(setAside > 0)
    }

    /// A change whose second part cannot be sealed leaves the group chain where the last commit left it: the same
    /// writer's next commit, and a reader, verify.
    @Test("A transaction that fails in its second part leaves the group chain as the last commit left it")
    func failedPartKeepsGroupChain() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        var expected = try V2Keychain.fill(keychain, count: 5)
        let log = try V3Keychain.log(keychain)
        let chainBefore = log.state.replayed.groups[1]
        var entries = try (0..<15).map { try AppendFailureTests.put($0, secretSize: 1_000_000) }
        entries.append(try AppendFailureTests.put(15, secretSize: Format.maximumSecretSize + 1))
        var random = RandomSource(SystemRandomNumberGenerator())
        #expect(throws: KeychainError.self) {
            _ = try keychain.withLock { () throws(KeychainError) in try log.append(entries, using: &random) }
        }
        #expect(log.state.replayed.groups[1]?.sequence == chainBefore?.sequence)
        #expect(log.state.replayed.groups[1]?.lastTag == chainBefore?.lastTag)
        try keychain.add(GenericPassword(service: "svc", account: "after", password: "x"))
        expected["after"] = Array("x".utf8)
        #expect(try liveSecrets(keychain) == expected)
        let reopened = try V3Keychain.open(path)
        #expect(reopened.tornTail == nil)
        #expect(try liveSecrets(reopened) == expected)
    }

    /// Catching up through another writer's transaction in parts, then its compaction and a later transaction: the
    /// reader's group chain follows, and its own next commits verify for a third reader.
    @Test("A reader follows another writer's transactions in parts and compaction, then writes commits that verify")
    func catchUpThroughPartsAndCompaction() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let first = try V3Keychain.create(in: directory)
        _ = try V2Keychain.fill(first, count: 3)
        let second = try V3Keychain.open(path)
        try second.batch { (batch) throws(KeychainError) in
            for number in 0..<17 { try batch.add(Self.item("big\(number)", [UInt8](repeating: UInt8(number), count: 1 << 20))) }
        }
        try first.refresh()
        try first.add(GenericPassword(service: "svc", account: "first after parts", password: "1"))
        try second.compact()
        try second.batch { (batch) throws(KeychainError) in
            for number in 17..<34 { try batch.add(Self.item("big\(number)", [UInt8](repeating: UInt8(number), count: 1 << 20))) }
        }
        try first.add(GenericPassword(service: "svc", account: "first after compaction", password: "2"))
        let third = try V3Keychain.open(path)
        let agree = try liveSecrets(third) == liveSecrets(first)
        #expect(agree)
        #expect(try liveSecrets(third).count == 3 + 34 + 2)
        #expect(try liveSecrets(second).count == 3 + 34 + 2)
    }

    /// One flipped bit in run B alone, or in each run: the open repairs and reports the copies, and the next write
    /// puts both runs back as written.
    @Test("Flipped bits in run B, or in both runs, are repaired, reported and put back by the next write", arguments: [[1], [0, 1]])
    func runsRepaired(runs: [Int]) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        let expected = try V2Keychain.fill(keychain, count: 5)
        let pristine = try fileBytes(path)
        for run in runs { try flipBit(path, at: (run == 0 ? 0 : 28_672) + 300) }
        let opened = try V3Keychain.open(path)
        #expect(try liveSecrets(opened) == expected)
        #expect(opened.repairs.headerCopies == runs)
        try opened.add(GenericPassword(service: "svc", account: "after", password: "x"))
        let bytes = try fileBytes(path)
        #expect(Array(bytes[0..<4_096]) == Array(pristine[0..<4_096]))
        #expect(Array(bytes[28_672..<32_768]) == Array(pristine[28_672..<32_768]))
    }

    /// ``RecordLogV3/isVersion3(_:)`` on files of each version: the first 16 bytes decide (SPEC.md §20.4), so a
    /// version 1 or 2 file is told apart without probing run B's sixteen places. (Its cost, measured in the review,
    /// is in Docs/Reviews/FormatVersion3-engine-helper-43.md; speed is measured by kcf-bench, not here.)
    @Test("Each version's file is told apart by isVersion3")
    func detection() throws {
        let directory = TemporaryDirectory()
        let v2 = try V2Keychain.create(in: directory)
        _ = try V2Keychain.fill(v2, count: 80, perBatch: 10, secretSize: 1_000)
        _ = try TestKeychain.create(in: directory, name: "v1.kcf", formatVersion: 1)
        _ = try V3Keychain.create(in: directory)
        for (name, isVersion3) in [("v2.kcf", false), ("v1.kcf", false), ("v3.kcf", true)] {
            let file = try PosixFileSystem().openExisting(directory.file(name))
            defer { file.close() }
            #expect(try RecordLogV3.isVersion3(file) == isVersion3, "\(name)")
        }
    }
}
