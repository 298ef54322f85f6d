import Foundation
import Testing
@testable import KeychainFile

/// Damage to a version 2 file opened through `Keychain`: repaired from parity and reported, or refused as
/// `corrupted` — never an empty or shorter keychain.
@Suite("Format version 2 through Keychain: damage")
struct KeychainV2DamageTests {
    /// A compacted version 2 file of 300 items (every item in records the header covers), its path, the items,
    /// and the log's written end.
    func compactedFile(_ directory: TemporaryDirectory) throws -> (path: String, expected: [String: [UInt8]], logEnd: Int) {
        let keychain = try V2Keychain.create(in: directory)
        let expected = try V2Keychain.fill(keychain, count: 300, perBatch: 50, secretSize: 200)
        try keychain.compact()
        let log = try V2Keychain.log(keychain)
        return (directory.file("v2.kcf"), expected, log.state.log.writtenEnd)
    }

    @Test("A flipped byte anywhere in a compacted file's records is repaired on open, and written back by the next write")
    func flippedBytesRepaired() throws {
        let directory = TemporaryDirectory()
        let (path, expected, logEnd) = try compactedFile(directory)
        #expect(logEnd > ChunkParity.dataLength, "the records span more than one chunk")
        let pristine = try fileBytes(path)
        for logical in stride(from: 3, to: logEnd, by: logEnd / 37) {
            let physical = HealingLayout.physical(logical)
            var damaged = pristine
            damaged[physical] ^= 0x5A
            try writeFileBytes(damaged, to: path)
            let keychain = try V2Keychain.open(path)
            #expect(try liveSecrets(keychain) == expected, "byte \(logical) of the log")
            #expect(try V2Keychain.log(keychain).repairedChunks == [logical / ChunkParity.dataLength])
            try keychain.add(GenericPassword(service: "other", account: "a", password: "b"))
            #expect(try fileBytes(path)[physical] == pristine[physical], "written back")
            #expect(try liveSecrets(V2Keychain.open(path)) == expected)
        }
        try writeFileBytes(pristine, to: path)
    }

    @Test("A zeroed 4 KiB sector of a compacted file's records is repaired")
    func zeroedSectorRepaired() throws {
        let directory = TemporaryDirectory()
        let (path, expected, logEnd) = try compactedFile(directory)
        let pristine = try fileBytes(path)
        for logical in [0, 4_096 * 3 + 17, logEnd - 4_096] {
            var damaged = pristine
            let start = HealingLayout.physical(logical)
            for offset in start..<min(start + 4_096, damaged.count) { damaged[offset] = 0 }
            try writeFileBytes(damaged, to: path)
            #expect(try liveSecrets(V2Keychain.open(path)) == expected, "4 KiB zeroed at log byte \(logical)")
        }
    }

    @Test("Damage beyond what parity repairs in a compacted file fails the open as corrupted: never an empty keychain")
    func unrepairableDamageRefused() throws {
        let directory = TemporaryDirectory()
        let (path, _, _) = try compactedFile(directory)
        var damaged = try fileBytes(path)
        let start = HealingLayout.physical(1_000)
        for offset in start..<(start + 12_000) { damaged[offset] ^= 0xFF }
        try writeFileBytes(damaged, to: path)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try V2Keychain.open(path) }
        // Nothing was written over the evidence.
        #expect(try fileBytes(path) == damaged)
    }

    @Test("A destroyed first header page opens from the second")
    func headerPageLost() throws {
        let directory = TemporaryDirectory()
        let (path, expected, _) = try compactedFile(directory)
        var damaged = try fileBytes(path)
        let pageB = Array(damaged[HealingLayout.headerBOffset..<(HealingLayout.headerBOffset + HealingLayout.headerPageLength)])
        for offset in 0..<HealingLayout.headerPageLength { damaged[offset] = 0xEE }
        try writeFileBytes(damaged, to: path)
        let keychain = try V2Keychain.open(path)
        #expect(try liveSecrets(keychain) == expected)
        // The next write puts the verified copy back in the page that lost it.
        try keychain.add(GenericPassword(service: "other", account: "a", password: "b"))
        #expect(Array(try fileBytes(path)[0..<HealingLayout.headerPageLength]) == pageB)
    }

    @Test("A flipped byte in an early appended record, below later commits, is repaired")
    func appendedRecordRepaired() throws {
        let directory = TemporaryDirectory()
        let keychain = try V2Keychain.create(in: directory)
        let expected = try V2Keychain.fill(keychain, count: 30)
        let path = directory.file("v2.kcf")
        var damaged = try fileBytes(path)
        damaged[HealingLayout.physical(100)] ^= 1
        try writeFileBytes(damaged, to: path)
        #expect(try liveSecrets(V2Keychain.open(path)) == expected)
    }
}

@Suite("Format version 2 through Keychain: recovering open")
struct KeychainV2RecoveryTests {
    /// The log's logical bytes, up to `end`, from a version 2 file's bytes.
    static func logBytes(_ file: [UInt8], end: Int) -> [UInt8] {
        (0..<end).map { file[HealingLayout.physical($0)] }
    }

    /// A file of 300 items in one record, then one more commit; its path and items.
    static func oneBigRecord(
        _ directory: TemporaryDirectory
    ) throws -> (path: String, expected: [String: [UInt8]], logEnd: Int, keys: RecordKeysV2) {
        let keychain = try V2Keychain.create(in: directory)
        let expected = try V2Keychain.fill(keychain, count: 300, perBatch: 300, secretSize: 200)
        try keychain.add(GenericPassword(service: "late", account: "a", password: "after the damage"))
        let log = try V2Keychain.log(keychain)
        return (directory.file("v2.kcf"), expected, log.state.log.writtenEnd, log.state.keys)
    }

    /// The items the first page of `record`, the first record of the file at `path`, puts: those of service "svc"
    /// its other pages do not (the first page's associated data names the chain value before the record, which a
    /// test does not hold). Read before the file is damaged.
    static func onFirstPage(_ record: RecordV2Decoder.Scanned, in log: [UInt8], keys: RecordKeysV2, path: String) throws -> Set<ItemID> {
        var later = Set<ItemID>()
        for page in record.pages.dropFirst() {
            for entry in try RecordV2Decoder.openPage(page, of: record, in: log, previousChain: [], keys: keys) {
                if case .put(let id, _, _) = entry { later.insert(id) }
            }
        }
        let all = try V2Keychain.open(path).search(.genericPassword(service: "svc"), returning: .persistentReference).compactMap(\.persistentReference?.itemID)
        return Set(all).subtracting(later)
    }

    @Test("A page damaged beyond repair costs its items only; the rest are served, and the damage is listed")
    func damagedPageCostsItsItems() throws {
        let directory = TemporaryDirectory()
        let (path, expected, logEnd, keys) = try Self.oneBigRecord(directory)
        var damaged = try fileBytes(path)
        let log = Self.logBytes(damaged, end: logEnd)
        let record = try RecordV2Decoder.scan(log, at: 0)
        let page = record.pages[1].box
        let onFirstPage = try Self.onFirstPage(record, in: log, keys: keys, path: path)
        // The items the page names, read before the damage.
        let onPage = try RecordV2Decoder.openPage(record.pages[1], of: record, in: log, previousChain: [], keys: keys).compactMap { entry in
            if case .put(let id, _, _) = entry { return id } else { return nil }
        }
        #expect(page.count > 8_000)
        // Every byte of the page's ciphertext: 32 symbols of each codeword of its chunk, past what parity repairs.
        for logical in (page.lowerBound + 12)..<(page.upperBound - 16) { damaged[HealingLayout.physical(logical)] ^= 0xFF }
        try writeFileBytes(damaged, to: path)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try V2Keychain.open(path) }

        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        let report = try #require(recovered.recovery)
        #expect(costs(report.damage).count == 1)
        #expect(report.damage.first?.loss == .region(byteCount: page.count))
        // Each page's tag chains to the one before: the lost page breaks the link from the first page to the head.
        #expect(!onFirstPage.isEmpty && Set(report.damage.compactMap { $0.loss == .unconfirmed ? $0.itemID : nil }) == onFirstPage)
        let served = try liveSecrets(recovered)
        for (account, secret) in served { #expect(expected[account] == secret, "\(account)") }
        #expect(!onPage.isEmpty && served.count == 300 - onPage.count, "\(served.count) of 300 served; the page held \(onPage.count)")
        let servedIDs = Set(try recovered.search(Query(.genericPassword, limit: .all), returning: .persistentReference).compactMap { $0.persistentReference?.itemID })
        #expect(servedIDs.isDisjoint(with: onPage))
        #expect(try liveSecrets(recovered, service: "late") == ["a": Array("after the damage".utf8)])
        // Read-only, and the file is as it was.
        #expect(throws: KeychainError.invalidParameter("")) { try recovered.add(GenericPassword(service: "x", account: "y", password: "z")) }
        #expect(try fileBytes(path) == damaged)
    }

    @Test("A record whose frame cannot be walked costs the bytes up to the next record that verifies, which is served")
    func damagedFrameCostsTheRecord() throws {
        let directory = TemporaryDirectory()
        let (path, expected, _, _) = try Self.oneBigRecord(directory)
        var damaged = try fileBytes(path)
        let start = HealingLayout.physical(20_000)
        for offset in start..<(start + 12_000) { damaged[offset] ^= 0xFF }
        try writeFileBytes(damaged, to: path)
        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        let report = try #require(recovered.recovery)
        #expect(report.isDamaged)
        for (account, secret) in try liveSecrets(recovered) { #expect(expected[account] == secret, "\(account)") }
        #expect(try liveSecrets(recovered, service: "late") == ["a": Array("after the damage".utf8)])
    }

    @Test("A recovering open of an undamaged version 2 file reports nothing and serves everything")
    func recoveringOpenOfAnIntactFile() throws {
        let directory = TemporaryDirectory()
        let keychain = try V2Keychain.create(in: directory)
        let expected = try V2Keychain.fill(keychain, count: 20, perBatch: 3)
        try keychain.delete(.genericPassword(service: "svc", account: "user1"))
        let recovered = try Keychain.open(at: directory.file("v2.kcf"), credential: TestKeychain.password, options: .init(recover: true))
        #expect(recovered.recovery?.isDamaged == false)
        #expect(try liveSecrets(recovered) == expected.filter { $0.key != "user1" })
    }
}

/// Damage in the second half of a large record, where other threads than the caller's open the pages.
@Suite("Format version 2 through Keychain: damage where the pages are opened on several threads")
struct KeychainV2ParallelDamageTests {
    /// Shares for two threads even in the test's records.
    static let tuning = ParallelTuning(workerCount: 2, minimumParallelEntries: 2, windowSize: 1 << 20)

    /// A file of one batch of 4,000 items (one record of about 90 pages) and an add after it (so that the batch is
    /// acknowledged by the commit before the newest: damage to it is damage, never a last write set aside), its
    /// items and the log's written end.
    func largeRecordFile(_ directory: TemporaryDirectory) throws -> (path: String, expected: [String: [UInt8]], logEnd: Int) {
        let keychain = try V2Keychain.create(in: directory)
        var expected = try V2Keychain.fill(keychain, count: 4_000, perBatch: 4_000, secretSize: 40)
        try keychain.add(GenericPassword(service: "svc", account: "last", value: [1, 2, 3]))
        expected["last"] = [1, 2, 3]
        return (directory.file("v2.kcf"), expected, try V2Keychain.log(keychain).state.log.writtenEnd)
    }

    /// The `.corrupted` error's offset and reason, or a description of any other outcome.
    static func openFailure(_ path: String, tuning: ParallelTuning) -> String {
        ParallelTuning.$current.withValue(tuning) {
            do {
                _ = try V2Keychain.open(path)
                return "opened"
            } catch let error as KeychainError {
                guard case .corrupted(let offset, let reason) = error else { return "\(error)" }
                return "corrupted at \(offset): \(reason)"
            } catch {
                return "\(error)"
            }
        }
    }

    @Test("A flipped byte in the last pages of a large record is found, repaired from parity and reported")
    func lateDamageRepaired() throws {
        let directory = TemporaryDirectory()
        let (path, expected, logEnd) = try largeRecordFile(directory)
        let pristine = try fileBytes(path)
        for logical in [logEnd - 100, logEnd - 5_000, logEnd * 2 / 3] {
            var damaged = pristine
            damaged[HealingLayout.physical(logical)] ^= 0x20
            try writeFileBytes(damaged, to: path)
            try ParallelTuning.$current.withValue(Self.tuning) {
                let keychain = try V2Keychain.open(path)
                #expect(try liveSecrets(keychain) == expected, "byte \(logical) of the log")
                #expect(try V2Keychain.log(keychain).repairedChunks == [logical / ChunkParity.dataLength], "byte \(logical) of the log")
            }
        }
    }

    @Test("A page in the second half of a large record that parity cannot repair fails the open at that page, as the sequential replay does")
    func lateDamageRefused() throws {
        let directory = TemporaryDirectory()
        let (path, _, logEnd) = try largeRecordFile(directory)
        let pristine = try fileBytes(path)
        let log = (0..<logEnd).map { pristine[HealingLayout.physical($0)] }
        let batch = try RecordV2Decoder.scan(log, at: 0)
        #expect(batch.end > logEnd * 9 / 10, "the batch's record holds nearly the whole log")
        let pages = batch.pages
        var checked = 0
        for page in pages[(pages.count / 2)...] {
            // Thirty flipped bytes of each of sixteen codewords (runs of 16 bytes, 256 apart in a chunk), all inside
            // the page's ciphertext: more than their 32 parity symbols correct.
            let first = page.box.lowerBound + 30
            let last = first + 29 * 256 + 15
            guard last < page.box.upperBound - 16, first / ChunkParity.dataLength == last / ChunkParity.dataLength else { continue }
            var damaged = pristine
            for row in stride(from: first, to: last, by: 256) {
                for logical in row..<(row + 16) { damaged[HealingLayout.physical(logical)] ^= 0x5C }
            }
            try writeFileBytes(damaged, to: path)
            let sequential = Self.openFailure(path, tuning: .sequential)
            #expect(sequential.hasPrefix("corrupted at \(page.box.lowerBound): "), "page at \(page.box.lowerBound): \(sequential)")
            #expect(Self.openFailure(path, tuning: Self.tuning) == sequential, "page at \(page.box.lowerBound)")
            checked += 1
            if checked == 3 { break }
        }
        #expect(checked == 3)
    }
}

/// A transaction in parts is applied to the index part by part as each verifies (so that it is never held whole
/// beside the index), and taken out again when a later part does not verify.
@Suite("Format version 2 through Keychain: a transaction in parts applied as it verifies")
struct KeychainV2PiecewiseTransactionTests {
    @Test("A transaction whose commit does not verify, even repaired, leaves none of its earlier parts' items")
    func laterPartDamaged() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v2.kcf")
        let keychain = try V2Keychain.create(in: directory)
        let kept = try V2Keychain.fill(keychain, count: 3)
        let before = try V2Keychain.log(keychain).end
        // 20 secrets of 1 MiB: a first part of 14 items, then a commit of 6.
        try keychain.batch { (batch) throws(KeychainError) in
            for number in 0..<20 {
                try batch.add(GenericPassword(service: "big", account: "\(number)", value: [UInt8](repeating: UInt8(number), count: 1 << 20)))
            }
        }
        let logEnd = try V2Keychain.log(keychain).state.log.writtenEnd
        var pristine = try fileBytes(path)
        let log = (before..<logEnd).map { pristine[HealingLayout.physical($0)] }
        let firstPart = try RecordV2Decoder.scan(log, at: 0)
        #expect(firstPart.kind == .part && before + firstPart.end < logEnd - 400_000, "the commit follows a part")
        // Sixteen codewords with thirty damaged bytes each, in the commit's last secret box: beyond what parity repairs.
        let start = logEnd - 300_000
        #expect(start / ChunkParity.dataLength == (start + 30 * 256) / ChunkParity.dataLength)
        for row in stride(from: start, to: start + 30 * 256, by: 256) {
            for logical in row..<(row + 16) { pristine[HealingLayout.physical(logical)] ^= 0x5C }
        }
        try writeFileBytes(pristine, to: path)
        let reopened = try V2Keychain.open(path)
        #expect(try liveSecrets(reopened) == kept)
        #expect(try liveSecrets(reopened, service: "big").isEmpty)
        #expect(reopened.count == kept.count)
        #expect(try V2Keychain.log(reopened).tornTail?.mayHoldAcknowledgedData == true)
    }
}
