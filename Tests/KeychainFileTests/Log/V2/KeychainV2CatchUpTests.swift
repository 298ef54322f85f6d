import Foundation
import Testing
@testable import KeychainFile

/// Catching up with other writers, and files cut short by a power loss, on format version 2.
@Suite("Format version 2 through Keychain: other writers and short files")
struct KeychainV2CatchUpTests {
    @Test("A remnant cut and replaced by another writer's commit of the same length is seen, not cut again")
    func sameSizeChangeIsSeen() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v2.kcf")
        let first = try V2Keychain.create(in: directory)
        _ = try V2Keychain.fill(first, count: 3)
        let item = GenericPassword(service: "svc", account: "from second", password: "acknowledged")
        // How much the second writer's add grows the file, measured on a copy.
        let size = try fileBytes(path).count
        let copy = directory.file("copy.kcf")
        try writeFileBytes(try fileBytes(path), to: copy)
        try V2Keychain.open(copy).add(item)
        let growth = try fileBytes(copy).count - size
        // A writer killed after writing its record, before its slot: a remnant of exactly that length.
        try writeFileBytes(try fileBytes(path) + [UInt8](repeating: 0xA7, count: growth), to: path)
        try first.refresh()
        #expect(first.tornTail != nil)
        // The second writer cuts the remnant and commits its add: the file has the size the first one saw.
        let second = try V2Keychain.open(path)
        try second.add(item)
        #expect(try fileBytes(path).count == size + growth)
        // The first writer's next write must keep the second's acknowledged add.
        try first.add(GenericPassword(service: "svc", account: "from first", password: "x"))
        let reopened = try liveSecrets(V2Keychain.open(path))
        #expect(reopened["from second"] == Array("acknowledged".utf8))
        #expect(reopened["from first"] == Array("x".utf8))
        #expect(try liveSecrets(first) == reopened)
    }

    @Test("A catch-up that finds damage fails every read after it, never serving what came before as all")
    func failedCatchUpKeepsFailing() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v2.kcf")
        let first = try V2Keychain.create(in: directory)
        try first.add(GenericPassword(service: "first", account: "a", password: "1"))
        let second = try V2Keychain.open(path)
        let start = try V2Keychain.log(second).state.log.writtenEnd
        _ = try V2Keychain.fill(second, count: 300, perBatch: 300, secretSize: 200)
        try second.add(GenericPassword(service: "later", account: "y", password: "second commit"))
        var damaged = try fileBytes(path)
        let from = HealingLayout.physical(start + 20_000)
        for offset in from..<(from + 12_000) { damaged[offset] ^= 0xFF }
        try writeFileBytes(damaged, to: path)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try first.refresh() }
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) {
            _ = try first.find(GenericPassword.self, matching: .genericPassword(service: "later", account: "y"))
        }
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { _ = try first.search(Query(.genericPassword, limit: .all)) }
    }

    @Test("A file cut back to the older commit's end by a power loss opens with what that commit held")
    func slotBeforeSize() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v2.kcf")
        let keychain = try V2Keychain.create(in: directory)
        let expected = try V2Keychain.fill(keychain, count: 3)
        for extra in [0, 1, 100, 511] {
            try keychain.add(GenericPassword(service: "pad", account: "\(extra)", value: [UInt8](repeating: 1, count: extra + 1)))
        }
        let olderEnd = try V2Keychain.log(keychain).state.log.writtenEnd
        // One append of about 20 KiB: its slot reaches the disk, its bytes and the file's new size do not.
        try keychain.add(GenericPassword(service: "svc", account: "big", value: [UInt8](repeating: 0x42, count: 20_000)))
        let full = try fileBytes(path)
        try writeFileBytes(Array(full[0..<HealingLayout.physicalEnd(ofLog: olderEnd)]), to: path)
        let reopened = try V2Keychain.open(path)
        #expect(try liveSecrets(reopened) == expected)
        #expect(reopened.tornTail?.mayHoldAcknowledgedData == true)
    }

    /// A writer that added two items, and a reader opened after the first: the second record, which starts at
    /// log byte `end`, is one the reader has not read.
    static func secondRecordUnseen() throws -> (directory: TemporaryDirectory, writer: Keychain, reader: Keychain, end: Int) {
        let directory = TemporaryDirectory()
        let writer = try V2Keychain.create(in: directory)
        try writer.add(GenericPassword(service: "svc", account: "first", value: [UInt8](repeating: 1, count: 200)))
        let reader = try V2Keychain.open(directory.file("v2.kcf"))
        let end = try V2Keychain.log(reader).end
        try writer.add(GenericPassword(service: "svc", account: "second", value: [UInt8](repeating: 2, count: 200)))
        return (directory, writer, reader, end)
    }

    @Test("Records another writer committed that do not verify are set aside with the same report as a fresh open gives")
    func damagedCommitCaughtUp() throws {
        let (directory, writer, reader, end) = try Self.secondRecordUnseen()
        let path = directory.file("v2.kcf")
        let slot = try #require(try V2Keychain.log(writer).state.log.newest)
        // The second record damaged, and the parity in its commit slot too: nothing repairs it.
        var damaged = try fileBytes(path)
        for offset in (end + 100)..<(end + 140) { damaged[HealingLayout.physical(offset)] ^= 0xFF }
        let parity = HealingLayout.slotOffsets[Int(slot.seal.counter % 2)] + Seal.encodedLength
        for offset in parity..<(parity + ChunkParity.parityLength) { damaged[offset] ^= 0xA5 }
        try writeFileBytes(damaged, to: path)

        let opened = try V2Keychain.open(path)
        let expected = try #require(opened.tornTail)
        #expect(expected.mayHoldAcknowledgedData)
        try reader.refresh()
        #expect(reader.tornTail == expected)
        #expect(reader.head == opened.head)
    }

    @Test("A record another writer committed in a newer writer's page encoding is reported by a catch-up as by a fresh open: at its offset in the log, not in the catch-up's read window")
    func newerPageEncodingCaughtUp() throws {
        let (directory, writer, reader, end) = try Self.secondRecordUnseen()
        let path = directory.file("v2.kcf")
        let written = try V2Keychain.log(writer).state.log.writtenEnd
        try #require(written < ChunkParity.dataLength, "both records in chunk 0, whose bytes lie contiguous in the file")
        // The second record's page sealed again, as a newer writer would, in page encoding version 2.
        var bytes = try fileBytes(path)
        var record = Array(bytes[HealingLayout.physical(end)..<HealingLayout.physical(written)])
        let keys = try V2Keychain.log(reader).state.keys
        _ = try RecordV2Forgery.resealPage(&record, page: 0, previousChain: reader.head.chainValue, keys: keys) { $0[0] = 2 }
        bytes.replaceSubrange(HealingLayout.physical(end)..<HealingLayout.physical(written), with: record)
        try writeFileBytes(bytes, to: path)

        /// What a fresh open or a catch-up makes of the file: the error it throws, or the torn tail it sets aside.
        func outcome(_ body: () throws -> TornTail?) -> String {
            do { return "torn tail \(String(describing: try body()))" } catch { return "error \(error)" }
        }
        let pageOffset = end + (try RecordV2Decoder.scan(record, at: 0)).pages[0].box.lowerBound
        let opened = outcome { try V2Keychain.open(path).tornTail }
        #expect(opened.contains("\(pageOffset)"), "a fresh open names the page's offset in the log: \(opened)")
        let caughtUp = outcome {
            try reader.refresh()
            return reader.tornTail
        }
        #expect(caughtUp == opened)
    }
}
