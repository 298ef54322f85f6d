import Foundation
import Testing
@testable import KeychainFile

/// What ``HeaderFingerprint`` costs and where it acts: a damaged header copy that stays as it is, and the writer's own
/// repair of it, do not make every catch-up read the file again; a plain read notices another header written over
/// the file in place within SPEC.md §16's 10 ms, without an explicit refresh.
@Suite("Header fingerprint: reloads only for another header")
struct HeaderFingerprintTests {
    /// The log's healing log, whose identity changes only when the log reads the file again from its header.
    static func healingLog(_ keychain: Keychain) throws -> ObjectIdentifier {
        let log = keychain.withLock { keychain.log }
        if let log = log as? RecordLogV2 { return ObjectIdentifier(log.state.log) }
        return ObjectIdentifier(try #require(log as? RecordLogV3).state.log)
    }

    /// Whether each header copy (page or run A, B) holds the verified header, as the open log saw it.
    static func copiesIntact(_ keychain: Keychain) throws -> [Bool] {
        let log = keychain.withLock { keychain.log }
        if let log = log as? RecordLogV2 { return log.state.pagesIntact }
        return try #require(log as? RecordLogV3).state.runsIntact
    }

    @Test("A damaged first header copy, then the writer's repair of it: catching up reads no header again", arguments: [2, 3])
    func damagedCopyIsNotAChange(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("keychain.kcf")
        let created = try CatchUpAfterSameSizeCopyInPlaceTests.create(formatVersion, in: directory, name: "keychain.kcf")
        try created.add(GenericPassword(service: "svc", account: "before", password: "p"))
        // Byte 100 of the first copy: inside the epoch salt or the fields after it, covered by the copy's checksum.
        try flipBit(path, at: 100)
        let reader = try CatchUpAfterSameSizeCopyInPlaceTests.open(path)
        #expect(try Self.copiesIntact(reader) == [false, true])
        let opened = try Self.healingLog(reader)
        try reader.refresh()
        try reader.refresh()
        #expect(try Self.healingLog(reader) == opened)

        // The write puts the verified header back in the first copy; the log's fingerprint follows what it wrote.
        try reader.add(GenericPassword(service: "svc", account: "after", password: "q"))
        #expect(try Self.copiesIntact(reader) == [true, true])
        let written = try Self.healingLog(reader)
        try reader.refresh()
        #expect(try Self.healingLog(reader) == written)
        #expect(try CatchUpAfterSameSizeCopyInPlaceTests.open(path).count == 2)
    }

    @Test("A read more than 10 ms after a same-size copy was written over the file in place sees the copy", arguments: [1, 2, 3])
    func plainReadNotices(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let (reader, copyHead, _) = try CatchUpAfterSameSizeCopyInPlaceTests.openThenOverwriteWithCompactedCopy(formatVersion, in: directory)
        usleep(20_000)
        _ = try reader.keySlots()   // a read, which catches up first (an empty keychain's search finds nothing)
        #expect(reader.head == copyHead)
    }
}
