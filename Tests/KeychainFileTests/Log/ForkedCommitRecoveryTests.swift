import Foundation
import Testing
@testable import KeychainFile

/// A keyless attacker who holds another copy of a keychain file, forked from the same commit (SPEC.md §25.3): both
/// copies then committed a record of the same sequence number at the same offset, and each verifies after the commit
/// they share. The attacker puts the other copy's record over the acknowledged one. A plain open refuses the file
/// (the newest commit slot names another head); a recovering open must not serve the other copy's entries unsaid.
@Suite("A recovering read against a commit put over by another copy's, forked from the same commit")
struct ForkedCommitRecoveryTests {
    /// Version 2 or 3; in version 3, x lives in group B beside a in group A.
    static func create(version: Int, in directory: TemporaryDirectory) throws -> Keychain {
        var options = TestKeychain.fastOptions
        options.formatVersion = version
        return try Keychain.create(at: directory.file("current.kcf"), credential: TestKeychain.password, options: options)
    }

    static func item(_ account: String, _ value: String, version: Int, group: String) -> GenericPassword {
        GenericPassword(service: "svc", account: account, accessGroup: version == 3 ? group : "", value: Array(value.utf8))
    }

    /// Where the log starts in a file of `keychain`'s version: the bytes before it are the header runs and commit slots.
    static func logStart(of keychain: Keychain, version: Int) throws -> Int {
        guard version == 3 else { return HealingLayout.logStart }
        return HeaderRunShiftedFileHandle.physical(HealingLayout.logStart, pageCount: try V3Keychain.log(keychain).state.pageCount)
    }

    /// The attack, with no key: every log byte of the file at `path` that differs from the fork's at `forkPath` (the
    /// records, their chunks' parity; not the commit slots) is put over by the fork's. The count of bytes copied.
    @discardableResult
    static func copyLogDifferences(from forkPath: String, to path: String, of keychain: Keychain, version: Int) throws -> Int {
        var current = try fileBytes(path)
        let forked = try fileBytes(forkPath)
        try #require(current.count == forked.count, "both files are \(current.count) and \(forked.count) bytes")
        var copied = 0
        for offset in try logStart(of: keychain, version: version)..<current.count where current[offset] != forked[offset] {
            current[offset] = forked[offset]
            copied += 1
        }
        try writeFileBytes(current, to: path)
        return copied
    }

    @Test("The other copy's commit, put over the acknowledged one, is not applied: the item is listed as the commit before left it, and named", arguments: [2, 3])
    func otherCopysCommit(version: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("current.kcf"), forkPath = directory.file("fork.kcf")
        let keychain = try Self.create(version: version, in: directory)
        try keychain.add(Self.item("a", "a-value", version: version, group: KeychainV3GroupTests.groupA))
        try keychain.add(Self.item("x", "x-value-1", version: version, group: KeychainV3GroupTests.groupB))
        try keychain.add(Self.item("z", "z-value-1", version: version, group: KeychainV3GroupTests.groupB))
        try writeFileBytes(try fileBytes(path), to: forkPath)
        let x = try #require(try keychain.search(.genericPassword(service: "svc", account: "x"), returning: .persistentReference)[0].persistentReference?.itemID)

        // The acknowledged commit updates x to version 2; the fork's, at the same place, to version 3.
        try keychain.update(.genericPassword(service: "svc", account: "x"), setting: [:], secret: Array("x-value-2".utf8))
        let fork = try Keychain.open(at: forkPath, credential: TestKeychain.password)
        try fork.update(.genericPassword(service: "svc", account: "x"), setting: [:], secret: Array("x-value-3".utf8))
        try #require(try Self.copyLogDifferences(from: forkPath, to: path, of: keychain, version: version) > 0)
        #expect(throws: KeychainError.self, "a plain open refuses the file") { _ = try Keychain.open(at: path, credential: TestKeychain.password) }

        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        let served = try liveSecrets(recovered)
        #expect(served["x"] != Array("x-value-3".utf8), "the fork's x, never acknowledged here, is served")
        #expect(served == ["a": Array("a-value".utf8), "x": Array("x-value-1".utf8), "z": Array("z-value-1".utf8)])
        let damage = recovered.recovery?.damage ?? []
        #expect(damage.contains { $0.itemID == x && $0.loss == .conflict }, "x is named: \(damage)")
        #expect(damage.contains { if case .region = $0.loss { $0.itemID == nil } else { false } }, "the acknowledged commit's bytes are listed: \(damage)")

        let report = try Keychain.salvage(from: path, credential: TestKeychain.password, to: directory.file("salvaged.kcf"))
        #expect(report.damages.contains { $0.itemID == x })
        #expect(try liveSecrets(Keychain.open(at: directory.file("salvaged.kcf"), credential: TestKeychain.password)) == served)
    }
}
