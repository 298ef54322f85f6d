import Foundation
import KeychainTestSupport
import Testing
@testable import KeychainFile

/// `Keychain.merge` on real files (SPEC.md §43): two copies of one keychain edited apart, merged in one transaction,
/// read back from disk; conflicts kept and resolved; tombstones carried with their times, through compaction.
@Suite("Merging copies of a keychain file")
struct KeychainMergeTests {
    private func password(_ service: String, _ account: String, _ secret: String) throws -> GenericPassword {
        try GenericPassword(service: service, account: account, password: secret)
    }

    private func secret(_ keychain: Keychain, _ service: String, _ account: String) throws -> String? {
        guard let found = try? keychain.search(.genericPassword(service: service, account: account), returning: [.data]) else { return nil }
        return found.first?.value.map { String(decoding: $0, as: UTF8.self) }
    }

    /// A keychain of `formatVersion` with four items, and a byte copy of it (the same file id) beside it.
    private func twoCopies(_ directory: TemporaryDirectory, formatVersion: Int) throws -> (Keychain, Keychain) {
        let ours = try TestKeychain.create(in: directory, name: "ours.kcf", formatVersion: formatVersion)
        let items = try ["keep", "change", "remove", "both"].map { try password("s", $0, "\($0)-0") }
        try ours.batch { (batch) throws(KeychainError) in
            for item in items { try batch.add(item) }
        }
        try writeFileBytes(try fileBytes(directory.file("ours.kcf")), to: directory.file("theirs.kcf"))
        let theirs = try Keychain.open(at: directory.file("theirs.kcf"), credential: TestKeychain.password)
        return (ours, theirs)
    }

    private func entries(_ keychain: Keychain) throws -> [ItemID: MergeEntry] {
        try keychain.mergeSide().entries
    }

    @Test("Changes on either side are taken, an item changed on both keeps the newer and a conflict copy", arguments: [2, 3])
    func copiesMerge(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let (ours, theirs) = try twoCopies(directory, formatVersion: formatVersion)
        try ours.add(try password("s", "added-here", "a"))
        _ = try ours.delete(.genericPassword(service: "s", account: "remove"))
        _ = try ours.update(.genericPassword(service: "s", account: "both"), setting: [:], secret: Array("both-ours".utf8))
        try theirs.add(try password("s", "added-there", "t"))
        _ = try theirs.update(.genericPassword(service: "s", account: "change"), setting: [:], secret: Array("change-1".utf8))
        Thread.sleep(forTimeInterval: 0.005)
        _ = try theirs.update(.genericPassword(service: "s", account: "both"), setting: [:], secret: Array("both-theirs".utf8))

        let report = try ours.merge(from: theirs)
        // The copies' logs share the four items' commit (SPEC.md §43.9): "change", changed there only, is taken.
        #expect(report.sharedHistoryEnd != nil)
        #expect(report.added == 2)  // added-there, and the conflict copy of "both"
        #expect(report.changed == 2)  // change, both
        #expect(report.deleted == 0)
        #expect(report.conflicts.map(\.kind) == [.changedOnBothSides])

        // Read back from disk, by a fresh open.
        let reopened = try Keychain.open(at: directory.file("ours.kcf"), credential: TestKeychain.password)
        #expect(try secret(reopened, "s", "keep") == "keep-0")
        #expect(try secret(reopened, "s", "change") == "change-1")
        #expect(try secret(reopened, "s", "remove") == nil)
        #expect(try secret(reopened, "s", "added-here") == "a")
        #expect(try secret(reopened, "s", "added-there") == "t")
        #expect(try secret(reopened, "s", "both") == "both-theirs")
        let copies = try reopened.conflictCopies()
        #expect(copies.count == 1)
        let bothID = try #require(try entries(reopened).first { $0.value.version?.attributes[.account] == .string("both") }?.key)
        let copy = try #require(copies.first { $0.itemID == bothID })
        #expect(copy.isItemLive)
        #expect(!copy.isChanged)
        guard case .string(let account)? = copy.attributes[.account] else { Issue.record("no account"); return }
        #expect(account == "both (conflict \(copy.itemID) \(String(copy.copyID.description.prefix(8))))")
        #expect(try reopened.secret(for: PersistentReference(itemID: copy.copyID)) == Array("both-ours".utf8))
        #expect(reopened.count == 6)  // keep, change, both, added-here, added-there, the copy

        // Merging the same copy again writes nothing.
        let head = reopened.head
        let again = try reopened.merge(from: theirs)
        #expect(again.isUnchanged)
        #expect(again.conflicts.isEmpty)
        #expect(reopened.head == head)
    }

    @Test("A deletion is carried with its time; a later merge does not bring the item back, even after compaction", arguments: [2, 3])
    func deletionsCarryTheirTime(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let (ours, theirs) = try twoCopies(directory, formatVersion: formatVersion)
        _ = try theirs.delete(.genericPassword(service: "s", account: "remove"))
        let removed = try #require(try entries(ours).first { $0.value.version?.attributes[.account] == .string("remove") }?.key)
        let deletedAt = try #require(try entries(theirs)[removed]?.tombstone)
        _ = try theirs.compact()
        #expect(try entries(theirs)[removed]?.tombstone == deletedAt)

        let report = try ours.merge(from: theirs)
        #expect(report.deleted == 1)
        let reopened = try Keychain.open(at: directory.file("ours.kcf"), credential: TestKeychain.password)
        #expect(try secret(reopened, "s", "remove") == nil)
        #expect(try entries(reopened)[removed]?.tombstone == deletedAt)
        _ = try reopened.compact()
        #expect(try entries(reopened)[removed]?.tombstone == deletedAt)

        // The other way round: theirs, compacted, never sees the item come back from ours's older copy.
        let back = try theirs.merge(from: reopened)
        #expect(back.isUnchanged)
        #expect(try secret(theirs, "s", "remove") == nil)
    }

    @Test("A tombstone of an id this copy never held is recorded, so that a third copy's older item does not come back", arguments: [2, 3])
    func tombstoneOfUnknownID(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let (ours, theirs) = try twoCopies(directory, formatVersion: formatVersion)
        try theirs.add(try password("s", "short-lived", "x"))
        try writeFileBytes(try fileBytes(directory.file("theirs.kcf")), to: directory.file("third.kcf"))
        let third = try Keychain.open(at: directory.file("third.kcf"), credential: TestKeychain.password)
        Thread.sleep(forTimeInterval: 0.005)
        _ = try theirs.delete(.genericPassword(service: "s", account: "short-lived"))

        let report = try ours.merge(from: theirs)
        #expect(report.tombstones == 1)
        #expect(report.added == 0)
        let afterThird = try ours.merge(from: third)
        #expect(afterThird.added == 0)
        #expect(try secret(ours, "s", "short-lived") == nil)
    }

    @Test("Merging either way gives the same items and tombstones", arguments: [2, 3])
    func commutativeOnFiles(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let (ours, theirs) = try twoCopies(directory, formatVersion: formatVersion)
        try ours.add(try password("s", "x", "1"))
        _ = try ours.delete(.genericPassword(service: "s", account: "change"))
        _ = try theirs.update(.genericPassword(service: "s", account: "both"), setting: [:], secret: Array("2".utf8))
        try theirs.add(try password("s", "x", "3"))  // the same primary key as ours's x: a collision
        try writeFileBytes(try fileBytes(directory.file("ours.kcf")), to: directory.file("ours2.kcf"))
        try writeFileBytes(try fileBytes(directory.file("theirs.kcf")), to: directory.file("theirs2.kcf"))
        let ours2 = try Keychain.open(at: directory.file("ours2.kcf"), credential: TestKeychain.password)
        let theirs2 = try Keychain.open(at: directory.file("theirs2.kcf"), credential: TestKeychain.password)

        let report = try ours.merge(from: theirs)
        _ = try theirs2.merge(from: ours2)
        #expect(report.conflicts.contains { $0.kind == .primaryKeyTaken })
        let (left, right) = (try entries(ours), try entries(theirs2))
        #expect(MergeHistory.same(left, right), "\(MergeHistory.difference(left, right))")
        #expect(ours.count == theirs2.count)
    }

    @Test("With a base, a change on one side only is taken without a conflict copy", arguments: [2, 3])
    func threeWay(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let (ours, theirs) = try twoCopies(directory, formatVersion: formatVersion)
        try writeFileBytes(try fileBytes(directory.file("ours.kcf")), to: directory.file("base.kcf"))
        let base = try Keychain.open(at: directory.file("base.kcf"), credential: TestKeychain.password)
        _ = try ours.update(.genericPassword(service: "s", account: "keep"), setting: [:], secret: Array("ours".utf8))
        Thread.sleep(forTimeInterval: 0.005)
        _ = try theirs.update(.genericPassword(service: "s", account: "change"), setting: [:], secret: Array("theirs".utf8))
        _ = try theirs.delete(.genericPassword(service: "s", account: "keep"))

        // Without the base, "keep" changed here and deleted there: the deletion is newer, and wins. (Compacted, the
        // copy shares no history with theirs, which would otherwise give the merge the state they forked from.)
        try writeFileBytes(try fileBytes(directory.file("ours.kcf")), to: directory.file("plain.kcf"))
        let plain = try Keychain.open(at: directory.file("plain.kcf"), credential: TestKeychain.password)
        _ = try plain.compact()
        #expect(try plain.merge(from: theirs).sharedHistoryEnd == nil)
        #expect(try secret(plain, "s", "keep") == nil)

        // With it, both changed "keep": the change is kept over the deletion, and reported.
        let report = try ours.merge(from: theirs, base: base)
        #expect(try secret(ours, "s", "keep") == "ours")
        #expect(try secret(ours, "s", "change") == "theirs")
        #expect(report.conflicts.map(\.kind) == [.changedWhereDeleted])
        #expect(try ours.conflictCopies().isEmpty)
    }

    @Test("Resolving keeps one version; a later merge does not make the same copy again", arguments: [false, true])
    func resolve(keepCopy: Bool) throws {
        let directory = TemporaryDirectory()
        let (ours, theirs) = try twoCopies(directory, formatVersion: 2)
        _ = try ours.update(.genericPassword(service: "s", account: "both"), setting: [:], secret: Array("ours".utf8))
        Thread.sleep(forTimeInterval: 0.005)
        _ = try theirs.update(.genericPassword(service: "s", account: "both"), setting: [:], secret: Array("theirs".utf8))
        _ = try ours.merge(from: theirs)
        let copy = try #require(try ours.conflictCopies().first)
        try ours.resolveConflict(copy.copyID, keeping: keepCopy ? .copy : .item)
        #expect(try ours.conflictCopies().isEmpty)
        #expect(try secret(ours, "s", "both") == (keepCopy ? "ours" : "theirs"))
        #expect(ours.count == 4)

        let again = try ours.merge(from: theirs)
        #expect(try ours.conflictCopies().isEmpty, "the resolved copy came back: \(again)")
        #expect(try secret(ours, "s", "both") == (keepCopy ? "ours" : "theirs"))
        let plainItem = try #require(try entries(ours).first { $0.value.version != nil && ConflictCopy.unmarked($0.value.version!.attributes, id: $0.key) == nil }?.key)
        #expect {
            try ours.resolveConflict(plainItem, keeping: .item)
        } throws: { error in
            guard case KeychainError.invalidParameter(let reason) = error else { return false }
            return reason.contains("not a conflict copy")
        }
    }

    @Test("Kept within the millisecond of the version it replaces, a conflict copy's version is still the newer: a later merge does not undo it")
    func resolveWithinOneMillisecond() throws {
        // Every write at one instant: both changes tie, and the resolution falls in the same millisecond as they do.
        let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_800_000_000) }
        func open(_ path: String) throws -> Keychain {
            try Keychain.open(at: path, credential: TestKeychain.password, random: RandomSource(SystemRandomNumberGenerator()), clock: clock, fileSystem: PosixFileSystem())
        }
        let directory = TemporaryDirectory()
        let created = try Keychain.create(
            at: directory.file("ours.kcf"), credential: TestKeychain.password, options: TestKeychain.options(formatVersion: 2),
            random: RandomSource(SystemRandomNumberGenerator()), clock: clock, fileSystem: PosixFileSystem())
        try created.add(try password("s", "both", "both-0"))
        try writeFileBytes(try fileBytes(directory.file("ours.kcf")), to: directory.file("theirs.kcf"))
        let ours = try open(directory.file("ours.kcf")), theirs = try open(directory.file("theirs.kcf"))
        let query = Query.genericPassword(service: "s", account: "both")
        _ = try ours.update(query, setting: [:], secret: Array("ours".utf8))
        _ = try theirs.update(query, setting: [:], secret: Array("theirs".utf8))
        _ = try ours.merge(from: theirs)
        let copy = try #require(try ours.conflictCopies().first)
        let kept = try #require(try secret(ours, "s", "both"))
        try ours.resolveConflict(copy.copyID, keeping: .copy)
        let chosen = try #require(try secret(ours, "s", "both"))
        #expect(chosen != kept)

        let again = try ours.merge(from: theirs)
        #expect(try ours.conflictCopies().isEmpty, "the version the resolution replaced came back as a copy: \(again)")
        #expect(try secret(ours, "s", "both") == chosen)
    }

    @Test("A credential added in the other copy since the base opens the merged keychain; one removed here is not put back; without a base none is carried")
    func credentialsCarried() throws {
        let directory = TemporaryDirectory()
        let ours = try TestKeychain.create(in: directory, name: "ours.kcf", formatVersion: 2)
        try ours.add(try password("s", "a", "one"))
        let revoked = Credential.key(SymmetricKey(size: .bits256))
        try ours.addCredential(revoked)
        for name in ["theirs.kcf", "base.kcf"] { try writeFileBytes(try fileBytes(directory.file("ours.kcf")), to: directory.file(name)) }
        let theirs = try Keychain.open(at: directory.file("theirs.kcf"), credential: TestKeychain.password)
        let base = try Keychain.open(at: directory.file("base.kcf"), credential: TestKeychain.password)
        try ours.removeCredential(revoked)
        let added = Credential.key(SymmetricKey(size: .bits256))
        try theirs.addCredential(added)

        let twoWay = try ours.merge(from: theirs)
        #expect(twoWay.credentialsCarried == 0 && twoWay.credentialsNotCarried == 2, "without a base, added there and removed here look alike")
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: directory.file("ours.kcf"), credential: added) }

        let threeWay = try ours.merge(from: theirs, base: base)
        #expect(threeWay.credentialsCarried == 1 && threeWay.credentialsNotCarried == 0)
        let reopened = try Keychain.open(at: directory.file("ours.kcf"), credential: added)
        #expect(try secret(reopened, "s", "a") == "one")
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: directory.file("ours.kcf"), credential: revoked) }
        #expect(try ours.merge(from: theirs, base: base).isUnchanged, "carried once")
    }

    @Test("Copies of different keychains are refused unless importing; a version 1 keychain is refused as the one written")
    func refusals() throws {
        let directory = TemporaryDirectory()
        let ours = try TestKeychain.create(in: directory, name: "a.kcf", formatVersion: 2)
        let other = try TestKeychain.create(in: directory, name: "b.kcf", formatVersion: 3)
        try other.add(try password("s", "from-b", "b"))
        #expect {
            try ours.merge(from: other)
        } throws: { error in
            guard case KeychainError.invalidParameter(let reason) = error else { return false }
            return reason.contains("another keychain")
        }
        #expect(ours.count == 0)
        let imported = try ours.merge(from: other, importing: true)
        #expect(imported.added == 1)
        #expect(try secret(ours, "s", "from-b") == "b")

        let old = try TestKeychain.create(in: directory, name: "v1.kcf", formatVersion: 1)
        #expect {
            try old.merge(from: ours, importing: true)
        } throws: { error in
            guard case KeychainError.unsupportedFeature = error else { return false }
            return true
        }
        // A version 1 copy can still be read as the other side.
        let fromOld = try ours.merge(from: old, importing: true)
        #expect(fromOld.isUnchanged)
    }

    @Test("A version of the other copy that a later deletion here overrides is listed as overruled, not dropped unsaid")
    func overruledListed() throws {
        let directory = TemporaryDirectory()
        let (ours, theirs) = try twoCopies(directory, formatVersion: 2)
        _ = try theirs.update(.genericPassword(service: "s", account: "change"), setting: [:], secret: Array("there".utf8))
        let changed = try #require(try entries(theirs).first { $0.value.version?.attributes[.account] == .string("change") }?.key)
        Thread.sleep(forTimeInterval: 0.005)
        _ = try ours.delete(.genericPassword(service: "s", account: "change"))
        let report = try ours.merge(from: theirs)
        #expect(report.overruled == [changed])
        #expect(!report.holdsEverything)
        #expect(try secret(ours, "s", "change") == nil)
    }

    @Test("A credential scoped to a group resolves a conflict copy in that group, keeping the copy; the file opens whole after")
    func scopedResolve() throws {
        let directory = TemporaryDirectory()
        let (ours, theirs) = try twoCopies(directory, formatVersion: 3)
        let team = try GenericPassword(service: "t", account: "shared", password: "0", accessGroup: "team")
        try ours.add(team)
        try writeFileBytes(try fileBytes(directory.file("ours.kcf")), to: directory.file("theirs.kcf"))
        let theirsAgain = try Keychain.open(at: directory.file("theirs.kcf"), credential: TestKeychain.password)
        _ = theirs
        _ = try ours.update(.genericPassword(service: "t", account: "shared"), setting: [:], secret: Array("ours".utf8))
        Thread.sleep(forTimeInterval: 0.005)
        _ = try theirsAgain.update(.genericPassword(service: "t", account: "shared"), setting: [:], secret: Array("theirs".utf8))
        _ = try ours.merge(from: theirsAgain)
        _ = try ours.addCredential(.password("team only"), scope: .groups(["team"]), keyDerivation: KeychainV3CredentialTests.cheap)
        let scoped = try Keychain.open(at: directory.file("ours.kcf"), credential: .password("team only"))
        let copy = try #require(try scoped.conflictCopies().first)
        try scoped.resolveConflict(copy.copyID, keeping: .copy)
        let reopened = try Keychain.open(at: directory.file("ours.kcf"), credential: TestKeychain.password)
        #expect(try secret(reopened, "t", "shared") == "ours")
        #expect(try reopened.conflictCopies().isEmpty)
        let again = try reopened.merge(from: theirsAgain)
        #expect(try reopened.conflictCopies().isEmpty, "the version set aside came back: \(again)")
    }

    @Test("An item whose account only looks like a marker is not a conflict copy")
    func markerLookalike() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: 2)
        try keychain.add(try password("s", "note (conflict 0123456789abcdef0123456789abcdef 01234567)", "x"))
        #expect(try keychain.conflictCopies().isEmpty)
    }

    @Test("A credential scoped to access groups can neither merge into its keychain nor be merged from: it cannot read every item")
    func scopedRefused() throws {
        let directory = TemporaryDirectory()
        let (full, _) = try twoCopies(directory, formatVersion: 3)
        try full.add(try GenericPassword(service: "s", account: "in-a", password: "a", accessGroup: "A"))
        _ = try full.addCredential(.password("scoped"), scope: .groups(["A"]), keyDerivation: KeychainV3CredentialTests.cheap)
        let copyPath = directory.file("copy.kcf")
        try writeFileBytes(try fileBytes(directory.file("ours.kcf")), to: copyPath)
        let scoped = try Keychain.open(at: copyPath, credential: .password("scoped"))
        let head = full.head
        for (into, from) in [(scoped, full), (full, scoped)] {
            #expect {
                try into.merge(from: from)
            } throws: { error in
                guard case KeychainError.unsupportedFeature(_, let reason) = error else { return false }
                return reason.contains("scoped to access groups")
            }
        }
        #expect(full.head == head)
    }

    @Test("Version 3: the tombstone kept under an item of another access group goes in that group's page; the file opens")
    func watermarkInItsGroup() throws {
        let directory = TemporaryDirectory()
        let ours = try TestKeychain.create(in: directory, name: "ours.kcf", formatVersion: 3)
        try ours.add(try GenericPassword(service: "s", account: "team-item", accessGroup: "team", value: Array("one".utf8)))
        try writeFileBytes(try fileBytes(directory.file("ours.kcf")), to: directory.file("theirs.kcf"))
        let theirs = try Keychain.open(at: directory.file("theirs.kcf"), credential: TestKeychain.password)
        let query = Query.genericPassword(service: "s", account: "team-item")
        _ = try theirs.delete(query)
        Thread.sleep(forTimeInterval: 0.005)
        _ = try ours.update(query, setting: [:], secret: Array("two".utf8))

        // The change here is later than the deletion there: it stays, under the deletion's tombstone (SPEC.md §43.7).
        let report = try ours.merge(from: theirs)
        #expect(report.tombstones == 1 && report.deleted == 0)
        let reopened = try Keychain.open(at: directory.file("ours.kcf"), credential: TestKeychain.password)
        #expect(try secret(reopened, "s", "team-item") == "two")
        #expect(try entries(reopened).values.contains { $0.version != nil && $0.tombstone != nil })
    }

    @Test("Version 3: an item moved to another group in the other copy comes with its move's tombstone, written where it was live; the file opens")
    func watermarkOfAMove() throws {
        let directory = TemporaryDirectory()
        let ours = try TestKeychain.create(in: directory, name: "ours.kcf", formatVersion: 3)
        try ours.add(try GenericPassword(service: "s", account: "moved", accessGroup: "team", value: Array("one".utf8)))
        try writeFileBytes(try fileBytes(directory.file("ours.kcf")), to: directory.file("theirs.kcf"))
        let theirs = try Keychain.open(at: directory.file("theirs.kcf"), credential: TestKeychain.password)
        Thread.sleep(forTimeInterval: 0.005)
        _ = try theirs.update(.genericPassword(service: "s", account: "moved"), setting: [.accessGroup: .string("other")])

        let report = try ours.merge(from: theirs)
        #expect(report.changed == 1 && report.tombstones == 1)
        let reopened = try Keychain.open(at: directory.file("ours.kcf"), credential: TestKeychain.password)
        let found = try reopened.search(.genericPassword(service: "s", account: "moved"), returning: [.attributes])
        #expect(found.first?.attributes?[.accessGroup] == .string("other"))
    }

    @Test("Two copies that added the same item under two ids settle it the same way in either order: the greater id keeps it")
    func equalVersionsUnderTwoIDs() throws {
        let attributes = try ItemAttributes(itemClass: .genericPassword, values: [
            .service: .string("s"), .account: .string("ann"), .accessGroup: .string(""), .synchronizable: .boolean(false),
            .creationDate: .date(Date(timeIntervalSince1970: 1_800_000_000)), .modificationDate: .date(Date(timeIntervalSince1970: 1_800_000_000)),
        ])
        // Many pairs of ids: a merge that picked by the order a dictionary happens to hold them would miss some.
        var random = SplitMix64(seed: 61)
        for _ in 0..<40 {
            let first = ItemID(using: &random), second = ItemID(using: &random)
            let (low, high) = first.bytesPrecede(second) ? (first, second) : (second, first)
            let ours = [low: MergeEntry(version: MergeVersion(id: low, attributes: attributes, secret: [1]))]
            let theirs = [high: MergeEntry(version: MergeVersion(id: high, attributes: attributes, secret: [1]))]
            for (left, right) in [(ours, theirs), (theirs, ours)] {
                let result = try CopyMerger.merge(ours: left, theirs: right, base: nil).result
                #expect(result[high]?.version != nil && result[low]?.version == nil)
            }
        }
    }

    @Test("Random edits on two files merge to exactly what the merge rules give, read back from disk", arguments: [2, 3])
    func filesAgreeWithTheRules(formatVersion: Int) throws {
        var random = SplitMix64(seed: UInt64(formatVersion))
        for round in 0..<6 {
            let directory = TemporaryDirectory()
            let (ours, theirs) = try twoCopies(directory, formatVersion: formatVersion)
            let fork = try entries(ours)
            for keychain in [ours, theirs] {
                for step in 0..<12 {
                    let account = "a\(random.next() % 6)"
                    switch random.next() % 3 {
                    case 0: _ = try? keychain.add(try password("s", account, "\(round)-\(step)"))
                    case 1: _ = try? keychain.update(.genericPassword(service: "s", account: account), setting: [:], secret: Array("\(step)".utf8))
                    default: _ = try? keychain.delete(.genericPassword(service: "s", account: account))
                    }
                }
            }
            // The copies' logs share the fork's commit: its state is what each side changed since (SPEC.md §43.9).
            let expected = try CopyMerger.merge(ours: try entries(ours), theirs: try entries(theirs), base: fork, sharedHistory: true).result
            _ = try ours.merge(from: theirs)
            let reopened = try Keychain.open(at: directory.file("ours.kcf"), credential: TestKeychain.password)
            let written = try entries(reopened)
            #expect(MergeHistory.same(written, expected), "round \(round): \(MergeHistory.difference(written, expected))")
        }
    }
}
