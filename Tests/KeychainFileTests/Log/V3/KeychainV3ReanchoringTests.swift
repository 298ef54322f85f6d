import Foundation
import Testing
@testable import KeychainFile

/// A holder re-anchors its own key slot when it rewrites the file (Docs/FormatVersion3.md §2.2, Docs/Reviews/spec-v3-disagreements.md
/// D11): adding groups seals the adder's new keys in its own anchor rather than granting them to it, and every
/// rewrite empties the writer's slot of the grants that other holders' rotations and added groups left there — from
/// the opening its log keeps, and only while the slot is still the one that opening read.
@Suite("Format version 3: a holder re-anchors its own key slot when it rewrites")
struct KeychainV3ReanchoringTests {
    typealias Scoped = KeychainV3ScopedWriteTests
    static let cheap = KeychainV3CredentialTests.cheap

    /// The grants each slot of the file's header holds, in the header's order.
    static func grantCounts(_ path: String) throws -> [Int] {
        try KeychainV3ScopedRewriteTests.header(path).slots.map(\.grants.count)
    }

    static func addGroup(_ keychain: Keychain, _ number: Int) throws(KeychainError) {
        try keychain.add(GenericPassword(service: "svc", account: "g\(number)", password: "secret \(number)", accessGroup: "com.example.g\(number)"))
    }

    /// A new keychain with one item in the default group and a second credential, ``Scoped/scopedA``, scoped to it.
    static func fullWithScopedCredential(in directory: TemporaryDirectory) throws -> Keychain {
        let full = try V3Keychain.create(in: directory)
        try full.add(GenericPassword(service: "svc", account: "default-0", password: "d0"))
        try full.addCredential(Scoped.scopedA, scope: .groups([""]), keyDerivation: Self.cheap)
        return full
    }

    @Test("One credential adds 40 groups: its own slot is re-anchored each time, never granted to, and 40 groups fit")
    func addingGroupsKeepsOwnSlotEmpty() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let full = try V3Keychain.create(in: directory)
        // Before, each group added granted to the adder's own slot, and the 33rd was refused (32 grants).
        for number in 0..<40 { try Self.addGroup(full, number) }
        #expect(try Self.grantCounts(path) == [0])
        let again = try V3Keychain.open(path)
        #expect(again.count == 40)
        let secret = try again.find(GenericPassword.self, matching: .genericPassword(service: "svc", account: "g39")).first?.value
        #expect(secret == Array("secret 39".utf8))
    }

    @Test("A scoped holder's compaction empties its slot of the grants added groups left; it and the full holder open and write on")
    func scopedCompactionReanchors() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let full = try Self.fullWithScopedCredential(in: directory)
        for number in 0..<3 { try Self.addGroup(full, number) }
        #expect(try Self.grantCounts(path) == [0, 3])
        let scoped = try V3Keychain.open(path, credential: Scoped.scopedA)
        try scoped.compact()
        #expect(try Self.grantCounts(path) == [0, 0])
        // The re-anchored slot opens with its credential, on the same keys.
        let reopened = try V3Keychain.open(path, credential: Scoped.scopedA)
        #expect(reopened.count == 1)
        try reopened.add(GenericPassword(service: "svc", account: "default-1", password: "d1"))
        // The full holder reads everything, and grants to the slot again when it adds a group.
        try full.refresh()
        #expect(try V3Keychain.open(path).count == 5)
        try Self.addGroup(full, 3)
        #expect(try Self.grantCounts(path) == [0, 1])
        #expect(try V3Keychain.open(path, credential: Scoped.scopedA).count == 2)
    }

    @Test("A full holder's compaction empties its slot of the grant another full credential's password change left")
    func fullCompactionReanchors() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let full = try V3Keychain.create(in: directory)
        try full.add(GenericPassword(service: "svc", account: "default-0", password: "d0"))
        try full.addCredential(.password("second"), keyDerivation: Self.cheap)
        try V3Keychain.open(path, credential: .password("second"))
            .changePassword(from: "second", to: "second, renewed", keyDerivation: Self.cheap)
        #expect(try Self.grantCounts(path) == [1, 0])
        let first = try V3Keychain.open(path)
        try first.compact()
        #expect(try Self.grantCounts(path) == [0, 0])
        #expect(try V3Keychain.open(path).count == 1)
        #expect(try V3Keychain.open(path, credential: .password("second, renewed")).count == 1)
    }

    @Test("A slot granted to since the log opened it is not re-anchored from that stale opening: the compaction keeps it, and it opens")
    func staleOpeningIsNotUsed() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let full = try Self.fullWithScopedCredential(in: directory)
        try Self.addGroup(full, 0)
        let scoped = try V3Keychain.open(path, credential: Scoped.scopedA)
        // Another group added after the scoped log opened: its slot holds a grant that log never read, and the log
        // follows the file with the keys it holds (the log key and its group's key are kept).
        try Self.addGroup(full, 1)
        #expect(try Self.grantCounts(path) == [0, 2])
        try scoped.compact()
        #expect(try Self.grantCounts(path) == [0, 2])
        #expect(try V3Keychain.open(path, credential: Scoped.scopedA).count == 1)
        #expect(try V3Keychain.open(path).count == 3)
        // The slot still trusts the newest root: the next group added grants to it, and it opens through that grant.
        try full.refresh()
        try Self.addGroup(full, 2)
        #expect(try V3Keychain.open(path, credential: Scoped.scopedA).count == 1)
    }
}
