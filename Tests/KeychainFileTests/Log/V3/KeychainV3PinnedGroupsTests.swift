import Foundation
import Testing
@testable import KeychainFile

/// A pinned head against a version 3 file (SPEC.md §15.4 as SPEC.md §37.5 extends it). In versions 1
/// and 2 only a holder of the master key writes a later epoch, so a later epoch contains every earlier head. In
/// version 3 a holder of one group's credential rewrites the file into the next epoch too (a scoped compaction), so
/// "a later epoch" proves nothing: such a holder could put back an older copy, compact it past the pinned epoch, and
/// roll the other groups back with no reader noticing. A version 3 head therefore also names each group's chain, and a
/// later epoch contains it only if every pinned group's chain either began anew after the pinned epoch (which only a
/// holder of that group's key can do) or still passes through the pinned page.
@Suite("Format version 3: a pinned head names each group's chain")
struct KeychainV3PinnedGroupsTests {
    typealias Scoped = KeychainV3ScopedWriteTests

    static func items(of group: String, in keychain: Keychain) throws -> [String] {
        try Scoped.snapshot(keychain).filter { $0.hasPrefix("\(group)|") }
    }

    static func open(_ path: String, _ credential: Credential, pin: Head) throws -> Keychain {
        try Keychain.open(at: path, credential: credential, options: .init(expectedHead: pin))
    }

    /// Expects opening `path` with `credential` and `pin` to be refused as `rolledBack`.
    /// `naming`: words the error's description must hold (the group and what the heads show of it).
    static func expectRefused(_ path: String, _ credential: Credential, pin: Head, naming: String? = nil,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try open(path, credential, pin: pin)
            Issue.record("the pinned open succeeded", sourceLocation: sourceLocation)
        } catch let error as KeychainError {
            #expect(error == .rolledBack(expected: pin, found: pin), "\(error)", sourceLocation: sourceLocation)
            if let naming { #expect("\(error)".contains(naming), "\(error)", sourceLocation: sourceLocation) }
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    /// Puts `bytes` back at `path` and has A's holder write to A and compact until the file's epoch is past `epoch`.
    static func rollBack(_ path: String, to bytes: [UInt8], pastEpoch epoch: UInt64) throws {
        try writeFileBytes(bytes, to: path)
        let viewA = try V3Keychain.open(path, credential: Scoped.scopedA)
        _ = try KeychainV3GroupTests.add(viewA, group: Scoped.groupA, count: 1, from: 20)
        while viewA.head.epoch <= epoch { _ = try viewA.compact() }
    }

    @Test("A holder of A puts back an older copy and compacts it past the pinned epoch: a full holder's pin and B's refuse it")
    func scopedRollbackPastThePinnedEpoch() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Scoped.keychain(in: directory)
        let old = try fileBytes(path)
        _ = try KeychainV3GroupTests.add(full, group: Scoped.groupB, count: 1, from: 10)
        _ = try full.compact()
        let pinFull = full.head
        let pinB = try V3Keychain.open(path, credential: Scoped.scopedB).head
        // Both pins hold against the file they were taken from.
        #expect(try Self.items(of: Scoped.groupB, in: Self.open(path, TestKeychain.password, pin: pinFull)).count == 6)
        #expect(try Self.items(of: Scoped.groupB, in: Self.open(path, Scoped.scopedB, pin: pinB)).count == 6)

        try Self.rollBack(path, to: old, pastEpoch: pinFull.epoch)
        // The file alone cannot tell: without a pin it opens, B back at its five items, A with its new one.
        #expect(try Self.items(of: Scoped.groupB, in: V3Keychain.open(path)).count == 5)
        #expect(try Self.items(of: Scoped.groupA, in: V3Keychain.open(path)).count == 5)
        #expect(try V3Keychain.open(path).head.epoch > pinFull.epoch)
        // The message names the group whose chain the heads show began before the pinned one did.
        Self.expectRefused(path, TestKeychain.password, pin: pinFull, naming: "began in epoch")
        Self.expectRefused(path, Scoped.scopedB, pin: pinB, naming: "began in epoch")
    }

    @Test("A keychain kept open catches up with a file A's holder rolled back past its epoch: its own head is the pin, and it refuses")
    func openKeychainRefusesTheRollback() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Scoped.keychain(in: directory)
        let old = try fileBytes(path)
        _ = try KeychainV3GroupTests.add(full, group: Scoped.groupB, count: 1, from: 10)
        let viewB = try V3Keychain.open(path, credential: Scoped.scopedB)
        try Self.rollBack(path, to: old, pastEpoch: full.head.epoch)
        #expect(throws: KeychainError.rolledBack(expected: full.head, found: full.head)) { try full.refresh() }
        #expect(throws: KeychainError.rolledBack(expected: full.head, found: full.head)) { try viewB.refresh() }
        // And every later read says so, rather than serving what it held before as if the file still held it.
        #expect(throws: KeychainError.rolledBack(expected: full.head, found: full.head)) { _ = try Self.items(of: Scoped.groupB, in: full) }
    }

    @Test("A group added after an older copy was taken and dropped by putting that copy back is refused by a pin (finding 4)")
    func olderKeyTablePutBack() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Scoped.keychain(in: directory)
        let old = try fileBytes(path)
        _ = try KeychainV3GroupTests.add(full, group: "group c", count: 2)
        let pin = full.head
        #expect(try Self.items(of: "group c", in: Self.open(path, TestKeychain.password, pin: pin)).count == 2)

        try Self.rollBack(path, to: old, pastEpoch: pin.epoch)
        // Without a pin a full holder opens it, and group C is gone: the older key table does not name it.
        #expect(try Self.items(of: "group c", in: V3Keychain.open(path)).isEmpty)
        let keyC = try #require(pin.groups.last?.keyID)
        Self.expectRefused(path, TestKeychain.password, pin: pin, naming: "key id \(keyC), which the pinned head names, is not in the file")
    }

    @Test("A fork of B — another page where the pin saw B's page, B's chain begun in the same epoch — compacted past the pin by A is refused")
    func forkOfBThroughTheSameStart() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Scoped.keychain(in: directory)
        let base = try fileBytes(path)
        // One copy: B's holder adds an item; the full holder pins it.
        _ = try KeychainV3GroupTests.add(V3Keychain.open(path, credential: Scoped.scopedB), group: Scoped.groupB, count: 1, from: 40)
        try full.refresh()
        let pin = full.head
        // B's holder's pin (B's chain followed with its key) and A's (B's chain seen only as page tags).
        let pinB = try V3Keychain.open(path, credential: Scoped.scopedB).head
        let pinA = try V3Keychain.open(path, credential: Scoped.scopedA).head
        let keyB = try #require(try V3Keychain.log(full).state.groups.keyID(named: Scoped.groupB))
        let pinnedB = try #require(pin.groups.first { $0.keyID == keyB })
        #expect(pinnedB.sequence > 0)
        // The other copy: from the same base, B's holder adds other items, so B's chain has a page where the pin saw
        // one, and one more after it; A's holder then compacts that copy past the pinned epoch.
        try writeFileBytes(base, to: path)
        let viewB = try V3Keychain.open(path, credential: Scoped.scopedB)
        _ = try KeychainV3GroupTests.add(viewB, group: Scoped.groupB, count: 1, from: 50)
        _ = try KeychainV3GroupTests.add(viewB, group: Scoped.groupB, count: 1, from: 60)
        try Self.rollBack(path, to: try fileBytes(path), pastEpoch: pin.epoch)
        let forked = try #require(try V3Keychain.open(path).head.groups.first { $0.keyID == pinnedB.keyID })
        #expect(forked.startEpoch == pinnedB.startEpoch && forked.sequence == pinnedB.sequence + 1)
        Self.expectRefused(path, TestKeychain.password, pin: pin)
        Self.expectRefused(path, Scoped.scopedB, pin: pinB)
        Self.expectRefused(path, Scoped.scopedA, pin: pinA)
    }

    @Test("Rewrites after the pin — scoped compactions by A and by B, a full compaction, writes in between — keep every pin")
    func legitimateRewritesKeepThePins() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Scoped.keychain(in: directory)
        let pinFull = full.head
        let pinA = try V3Keychain.open(path, credential: Scoped.scopedA).head
        let pinB = try V3Keychain.open(path, credential: Scoped.scopedB).head
        let pins = [(TestKeychain.password, pinFull), (Scoped.scopedA, pinA), (Scoped.scopedB, pinB)]
        func check(_ step: String) throws {
            for (credential, pin) in pins {
                do {
                    _ = try Self.open(path, credential, pin: pin)
                } catch {
                    Issue.record("after \(step), a pin taken before is refused: \(error)")
                }
            }
        }
        let viewA = try V3Keychain.open(path, credential: Scoped.scopedA)
        _ = try viewA.compact()
        try check("A's compaction")
        let viewB = try V3Keychain.open(path, credential: Scoped.scopedB)
        _ = try KeychainV3GroupTests.add(viewB, group: Scoped.groupB, count: 2, from: 30)
        try check("B's writes after A's compaction")
        _ = try viewB.compact()
        try check("B's compaction")
        _ = try KeychainV3GroupTests.add(viewA, group: Scoped.groupA, count: 2, from: 30)
        _ = try viewA.compact()
        try check("A's second compaction")
        try full.refresh()
        _ = try full.compact()
        try check("a full compaction")
        _ = try KeychainV3GroupTests.add(full, group: "group c", count: 1)
        try check("adding a group")
    }

    @Test("A version 3 head names every group's chain as the last commit left it, and its text form reads back")
    func headNamesEveryGroup() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Scoped.keychain(in: directory)
        let heads = try #require(try V3Keychain.log(full).state.replayed.heads)
        let head = full.head
        #expect(head.groups.map(\.keyID) == heads.groups.map(\.keyID))
        #expect(head.groups.map(\.keyID).count == 3)
        for group in head.groups {
            let expected = try #require(heads[group.keyID])
            #expect(group.startEpoch == expected.startEpoch && group.sequence == expected.groupSequence && group.lastTag == expected.lastTag)
        }
        // B's holder sees the same heads (those of the groups it does not hold by count and tag).
        #expect(try V3Keychain.open(path, credential: Scoped.scopedB).head == head)
        let text = head.description
        #expect(text.split(separator: "/").count == 4)
        #expect(try Head(text + "\n") == head)
        #expect(try Head(text.uppercased()) == head)
        // A version 1 or 2 head's text has no group part and reads back as before.
        #expect(try Head("3.42.000102030405060708090a0b0c0d0e0f").groups.isEmpty)
    }

    @Test("A head's group part that is not keyid.start.sequence.tag, with key ids 1 … 255 in increasing order, is refused")
    func malformedGroupParts() throws {
        let tag = String(repeating: "ab", count: 16)
        let record = "3.42.\(String(repeating: "00", count: 16))"
        let good = try Head("\(record)/1.1.0.\(tag)/7.2.5.\(tag)")
        #expect(good.groups == [Head.Group(keyID: 1, startEpoch: 1, sequence: 0, lastTag: Array(repeating: 0xAB, count: 16)),
                                Head.Group(keyID: 7, startEpoch: 2, sequence: 5, lastTag: Array(repeating: 0xAB, count: 16))])
        for bad in [
            "\(record)/", "\(record)/1.1.0", "\(record)/1.1.0.\(tag).9", "\(record)/0.1.0.\(tag)", "\(record)/256.1.0.\(tag)",
            "\(record)/2.1.0.\(tag)/2.1.0.\(tag)", "\(record)/3.1.0.\(tag)/2.1.0.\(tag)", "\(record)/1.x.0.\(tag)",
            "\(record)/1.1.0.\(tag.dropLast())", "\(record)/1.1.0.\(tag.dropLast())g", "\(record)//1.1.0.\(tag)",
        ] {
            #expect(throws: KeychainError.invalidParameter("")) { _ = try Head(bad) }
        }
    }
}
