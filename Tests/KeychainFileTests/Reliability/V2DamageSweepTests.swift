import Foundation
import KeychainTestSupport
import Testing
@testable import KeychainFile

/// Damage swept over whole format version 2 files (Docs/FormatVersion2.md §2): one flipped byte, one lost 4 KiB
/// sector, or 64 flipped bits at random places, anywhere in the file — header pages, commit slots, records and
/// parity — is repaired on open, and every item reads back as it was: none lost. The file is a compacted one of
/// 1,000 items (every item in records the header covers) with appends after it, so the sweep crosses records of
/// both kinds, complete chunks and the last, partial one.
///
/// Each run prints how many opens it made and how many needed a repair.
@Suite("Reliability: damage anywhere in a version 2 file is repaired")
struct V2DamageSweepTests {
    static let path = "/memory/sweep.kcf"

    /// The file, its items, and the logical end of its log.
    static func file() throws -> (bytes: [UInt8], snapshot: KeychainSnapshot) {
        let fileSystem = MemoryFileSystem()
        let keychain = try Keychain.createForTesting(at: path, fileSystem: fileSystem, options: V2Keychain.options)
        try keychain.batch { (batch) throws(KeychainError) in
            for number in 0..<1_000 {
                try batch.add(GenericPassword(service: "svc", account: "user\(number)", value: Array("secret \(number) ".utf8) + [UInt8](repeating: UInt8(number & 0xFF), count: 100)))
            }
        }
        try keychain.compact()
        for number in 0..<20 {
            try keychain.add(GenericPassword(service: "late", account: "user\(number)", password: "late \(number)"))
        }
        try keychain.delete(.genericPassword(service: "svc", account: "user5"))
        return (try fileSystem.contents(of: path), try KeychainSnapshot(keychain))
    }

    static let cached = Result { try file() }

    struct Tally {
        var opens = 0
        var repaired = 0
        var lost = 0
        var problems: [String] = []
    }

    /// Opens `bytes` and compares what it holds with `expected`.
    static func check(_ bytes: [UInt8], _ expected: KeychainSnapshot, _ label: String, into tally: inout Tally) {
        tally.opens += 1
        do {
            let keychain = try Keychain.openForTesting(at: path, fileSystem: try MemoryFileSystem.holding(bytes, at: path))
            let snapshot = try KeychainSnapshot(keychain)
            if snapshot != expected {
                tally.lost += 1
                tally.problems.append("\(label): \(expected.items.count - snapshot.items.count) items fewer, or items changed")
            }
            let log = try #require(keychain.withLock { keychain.log as? RecordLogV2 })
            if !log.repairedChunks.isEmpty || log.state.pagesIntact.contains(false) { tally.repaired += 1 }
        } catch {
            tally.lost += 1
            tally.problems.append("\(label): \(error)")
        }
    }

    static func report(_ what: String, _ tally: Tally) {
        print("v2 damage sweep: \(what): \(tally.opens) opens, \(tally.repaired) repaired, \(tally.lost) lost")
        for problem in tally.problems.prefix(10) { Issue.record(Comment(rawValue: problem)) }
    }

    @Test("One flipped byte anywhere in the file: nothing lost")
    func flippedBytes() throws {
        let (bytes, expected) = try Self.cached.get()
        #expect(expected.items.count == 1_019)
        var tally = Tally()
        var damaged = bytes
        // About 4,000 places, a prime stride apart, over the whole file.
        for offset in stride(from: 0, to: bytes.count, by: 131) {
            damaged[offset] ^= 0xA5
            Self.check(damaged, expected, "byte \(offset) flipped", into: &tally)
            damaged[offset] = bytes[offset]
        }
        Self.report("one flipped byte", tally)
        #expect(tally.lost == 0)
        #expect(tally.repaired > tally.opens / 2)
    }

    @Test("One 4 KiB sector lost (zeroed) anywhere in the file: nothing lost")
    func lostSectors() throws {
        let (bytes, expected) = try Self.cached.get()
        var tally = Tally()
        for start in stride(from: 0, to: bytes.count, by: 4_096) {
            var damaged = bytes
            for offset in start..<min(start + 4_096, bytes.count) { damaged[offset] = 0 }
            Self.check(damaged, expected, "sector at \(start) zeroed", into: &tally)
        }
        Self.report("one zeroed 4 KiB sector", tally)
        #expect(tally.lost == 0)
    }

    @Test("64 flipped bits at random places in the file: nothing lost")
    func scatteredFlips() throws {
        let (bytes, expected) = try Self.cached.get()
        var tally = Tally()
        var random = SplitMix64(seed: 0x5EED)
        for trial in 0..<200 {
            var damaged = bytes
            for _ in 0..<64 {
                let offset = Int(random.next() % UInt64(bytes.count))
                damaged[offset] ^= UInt8(1) << UInt8(random.next() % 8)
            }
            Self.check(damaged, expected, "trial \(trial)", into: &tally)
        }
        Self.report("64 scattered flipped bits", tally)
        #expect(tally.lost == 0)
    }

    @Test("A file cut short anywhere opens whole (the cut bytes repaired as erasures) or is refused: never fewer items")
    func truncation() throws {
        let (bytes, expected) = try Self.cached.get()
        var whole = 0
        var refused: [String: Int] = [:]
        var lost: [String] = []
        let cuts = Array(stride(from: 0, to: bytes.count - 65_536, by: 4_099)) + Array(stride(from: bytes.count - 65_536, to: bytes.count, by: 97))
        for cut in cuts {
            let label = "cut at \(cut) of \(bytes.count)"
            do {
                let keychain = try Keychain.openForTesting(at: Self.path, fileSystem: try MemoryFileSystem.holding(Array(bytes[0..<cut]), at: Self.path))
                if try KeychainSnapshot(keychain) == expected { whole += 1 } else { lost.append(label) }
            } catch {
                refused["\(error.code)", default: 0] += 1
            }
        }
        print("v2 truncation sweep: \(cuts.count) cuts: \(whole) opened whole, refused \(refused), \(lost.count) opened with items missing")
        #expect(lost.isEmpty, "\(lost.prefix(5))")
        #expect(whole > 0)
    }
}
