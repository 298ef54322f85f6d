import Foundation
import Testing
@testable import KeychainFile

/// A version 2 change that cannot be written whole leaves nothing behind it (engine review, item 13): parts it
/// appended before a later part failed to seal are taken back at once.
@Suite("Format version 2: a change that fails part-way")
struct AppendFailureTests {
    static func put(_ number: Int, secretSize: Int) throws -> LogEntry {
        .put(
            id: try ItemID(bytes: [UInt8](repeating: UInt8(number), count: 15) + [0xA5]),
            attributes: try ItemAttributes(
                itemClass: .genericPassword,
                values: [.service: .string("svc"), .account: .string("big\(number)"), .creationDate: .date(Date()),
                         .modificationDate: .date(Date())]),
            secret: .bytes([UInt8](repeating: UInt8(number), count: secretSize)))
    }

    @Test("A later part that cannot be sealed takes back the parts already appended: the file is as the last commit left it")
    func laterPartFailureTakesBackEarlierParts() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v2.kcf")
        let keychain = try V2Keychain.create(in: directory)
        let expected = try V2Keychain.fill(keychain, count: 5)
        let before = try fileBytes(path)
        let log = try V2Keychain.log(keychain)
        // Fifteen puts of about 1 MB fill a first part; the sixteenth's secret is over the format's 1 MiB, which
        // only sealing finds (a batch refuses it before; the log must not rely on that).
        var entries = try (0..<15).map { try Self.put($0, secretSize: 1_000_000) }
        entries.append(try Self.put(15, secretSize: Format.maximumSecretSize + 1))
        #expect(RecordLogV2.partRanges(of: entries).count == 2)
        var random = RandomSource(SystemRandomNumberGenerator())
        #expect(throws: KeychainError.limitReached("")) {
            _ = try keychain.withLock { () throws(KeychainError) in try log.append(entries, using: &random) }
        }
        // Nothing of the failed change is left past the commit end, for this writer or the next: the log's bytes
        // are as before, and only a commit slot in the prefix says the cut.
        let after = try fileBytes(path)
        #expect(after.count == before.count)
        let logUnchanged = after.count == before.count && after[HealingLayout.logStart...] == before[HealingLayout.logStart...]
        #expect(logUnchanged)
        let reopened = try V2Keychain.open(path)
        #expect(reopened.tornTail == nil)
        #expect(try liveSecrets(reopened) == expected)
        // The writer that failed goes on.
        try keychain.add(GenericPassword(service: "svc", account: "after", password: "x"))
        #expect(try liveSecrets(V2Keychain.open(path))["after"] == Array("x".utf8))
    }
}
