import Foundation
import Testing
@testable import KeychainFile

/// Writes by a credential scoped to access groups (Docs/FormatVersion3.md §2.6, plan step 4): its appends seal only its
/// groups' pages and carry every other group's head as the last commit left it, so that the other groups' holders —
/// scoped or full — still find each of their chains at its head; every request outside its groups is refused with
/// `missingEntitlement` before anything is written.
@Suite("Format version 3: writes by a credential scoped to access groups")
struct KeychainV3ScopedWriteTests {
    static let groupA = KeychainV3GroupTests.groupA
    static let groupB = KeychainV3GroupTests.groupB
    static let scopedA = Credential.password("scoped to group a")
    static let scopedB = Credential.password("scoped to group b")

    /// A keychain with items in the default group (3), A (4) and B (5), a credential scoped to A and one scoped to B.
    static func keychain(in directory: TemporaryDirectory) throws -> (full: Keychain, path: String) {
        let full = try V3Keychain.create(in: directory)
        try KeychainV3GroupTests.add(full, group: "", count: 3)
        try KeychainV3GroupTests.add(full, group: groupA, count: 4)
        try KeychainV3GroupTests.add(full, group: groupB, count: 5)
        try full.addCredential(scopedA, scope: .groups([groupA]), keyDerivation: KeychainV3CredentialTests.cheap)
        try full.addCredential(scopedB, scope: .groups([groupB]), keyDerivation: KeychainV3CredentialTests.cheap)
        return (full, directory.file("v3.kcf"))
    }

    /// Every generic password as "group|account|secret", sorted.
    static func snapshot(_ keychain: Keychain) throws -> [String] {
        try keychain.search(Query(.genericPassword, limit: .all), returning: [.attributes, .data]).map {
            "\($0.attributes?.string(.accessGroup) ?? "")|\($0.attributes?.string(.account) ?? "")|\(String(decoding: $0.value ?? [], as: UTF8.self))"
        }.sorted()
    }

    @Test("A scoped holder adds, updates and deletes its group's items; the full holder and B's holder open the file whole after it")
    func scopedAppends() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Self.keychain(in: directory)
        let before = try Self.snapshot(full)
        let viewA = try V3Keychain.open(path, credential: Self.scopedA)
        #expect(viewA.scope == .groups([Self.groupA]))
        #expect(full.scope == .full)
        try KeychainV3GroupTests.add(viewA, group: Self.groupA, count: 2, from: 10)
        try viewA.update(.genericPassword(service: "svc", account: "\(Self.groupA)-1"), setting: [:], secret: Array("changed by a".utf8))
        try viewA.delete(.genericPassword(service: "svc", account: "\(Self.groupA)-2"))
        #expect(viewA.count == 5)
        // A full holder opening the file anew, and the one open before, see A's changes and every other item as it was.
        var expected = before.filter { !$0.hasPrefix("\(Self.groupA)|\(Self.groupA)-1|") && !$0.hasPrefix("\(Self.groupA)|\(Self.groupA)-2|") }
        expected += ["\(Self.groupA)|\(Self.groupA)-1|changed by a"]
        expected += try (10..<12).map { "\(Self.groupA)|\(Self.groupA)-\($0)|secret of \(Self.groupA)-\($0), long enough to look for" }
        #expect(try Self.snapshot(V3Keychain.open(path)) == expected.sorted())
        #expect(try Self.snapshot(full) == expected.sorted())
        // B's holder checks B's chain against the heads A's commits carried, and sees B's five items.
        let viewB = try V3Keychain.open(path, credential: Self.scopedB)
        #expect(try Self.snapshot(viewB) == before.filter { $0.hasPrefix("\(Self.groupB)|") })
        // And A's holder opening anew sees what it wrote.
        #expect(try Self.snapshot(V3Keychain.open(path, credential: Self.scopedA)) == expected.filter { $0.hasPrefix("\(Self.groupA)|") }.sorted())
    }

    @Test("A scoped append carries every other group's head as the last commit left it, and moves its own")
    func headsCarried() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Self.keychain(in: directory)
        let log = try V3Keychain.log(full)
        let keyA = try #require(log.state.groups.keyID(named: Self.groupA))
        let keyB = try #require(log.state.groups.keyID(named: Self.groupB))
        let headsBefore = try #require(log.state.replayed.heads)
        #expect(headsBefore.groups.map(\.keyID) == [1, keyA, keyB])
        let viewA = try V3Keychain.open(path, credential: Self.scopedA)
        try KeychainV3GroupTests.add(viewA, group: Self.groupA, count: 1, from: 10)
        try full.refresh()
        let headsAfter = try #require(try V3Keychain.log(full).state.replayed.heads)
        #expect(headsAfter[1] == headsBefore[1])
        #expect(headsAfter[keyB] == headsBefore[keyB])
        #expect(headsAfter[keyA]?.groupSequence == (headsBefore[keyA]?.groupSequence ?? 0) + 1)
        #expect(headsAfter[keyA]?.lastTag != headsBefore[keyA]?.lastTag)
    }

    @Test("A scoped holder writing after others wrote carries their newest heads: B's holder and a full holder open the file after each")
    func interleavedWriters() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Self.keychain(in: directory)
        let viewA = try V3Keychain.open(path, credential: Self.scopedA)
        let viewB = try V3Keychain.open(path, credential: Self.scopedB)
        for round in 0..<3 {
            try KeychainV3GroupTests.add(viewA, group: Self.groupA, count: 1, from: 20 + round)
            try KeychainV3GroupTests.add(viewB, group: Self.groupB, count: 1, from: 20 + round)
            try KeychainV3GroupTests.add(full, group: "", count: 1, from: 20 + round)
            try KeychainV3GroupTests.add(viewA, group: Self.groupA, count: 1, from: 30 + round)
            #expect(try V3Keychain.open(path).count == 12 + 4 * (round + 1), "round \(round)")
            #expect(try V3Keychain.open(path, credential: Self.scopedB).count == 5 + round + 1, "round \(round)")
        }
        try viewB.refresh()
        try viewA.refresh()
        try full.refresh()
        #expect(viewA.count == 4 + 6 && viewB.count == 5 + 3 && full.count == 24)
    }

    @Test("A scoped transaction written in two parts commits whole, and B's holder and a full holder open it")
    func transactionInParts() throws {
        let directory = TemporaryDirectory()
        let (_, path) = try Self.keychain(in: directory)
        let viewA = try V3Keychain.open(path, credential: Self.scopedA)
        let sequenceBefore = viewA.head.sequence
        let big = [UInt8](repeating: 0x5A, count: 1 << 20)
        try viewA.batch { (batch) throws(KeychainError) in
            for number in 0..<16 {
                try batch.add(GenericPassword(service: "big", account: "\(number)", accessGroup: Self.groupA, value: big))
            }
        }
        #expect(viewA.head.sequence == sequenceBefore + 2, "the batch was not written in two parts")
        let reopened = try V3Keychain.open(path)
        #expect(reopened.count == 12 + 16)
        #expect(try reopened.search(.genericPassword(service: "big", account: "15"), returning: .data).first?.value == big)
        #expect(try V3Keychain.open(path, credential: Self.scopedB).count == 5)
    }

    @Test("A commit without another group's head, or with a head naming a page that group does not have, is refused by that group's holders, and by A's holder, which counts B's segments", arguments: [0, 1])
    func droppedHeadCaught(kind: Int) throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Self.keychain(in: directory)
        let viewA = try V3Keychain.open(path, credential: Self.scopedA)
        let log = try V3Keychain.log(viewA)
        let keyA = try #require(log.state.groups.keyID(named: Self.groupA))
        let keyB = try #require(try V3Keychain.log(full).state.groups.keyID(named: Self.groupB))
        // A commit of A's page as a writer with the log key and A's key alone could make it: B's head left out, or
        // naming a page after B's last (a head only B's key can make true).
        var heads = try log.headsToCarry
        let headB = try #require(heads[keyB])
        heads = kind == 0
            ? heads.removing(keyB)
            : heads.setting(GroupHeadV3(keyID: keyB, startEpoch: headB.startEpoch, groupSequence: headB.groupSequence + 1, lastTag: headB.lastTag))
        try Self.appendForgedCommit(viewA, keyID: keyA, heads: heads)
        // The record is the newest commit: a holder that finds it wrong sets it aside as possibly acknowledged;
        // one more commit by the full holder would make it acknowledged and the file refused, so look at both.
        // A's holder cannot open B's pages, but counts them and reads their tags (§2.6): the head does not match.
        let againA = try V3Keychain.open(path, credential: Self.scopedA)
        #expect(againA.tornTail?.mayHoldAcknowledgedData == true, "A's holder took the commit without B's head")
        #expect(againA.count == 4)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) {
            try againA.add(GenericPassword(service: "svc", account: "on top", password: "x", accessGroup: Self.groupA))
        }
        let fullView = try V3Keychain.open(path)
        #expect(fullView.tornTail?.mayHoldAcknowledgedData == true, "a full holder took the commit without B's head")
        #expect(fullView.count == 12)
        let viewB = try V3Keychain.open(path, credential: Self.scopedB)
        #expect(viewB.tornTail?.mayHoldAcknowledgedData == true, "B's holder took the commit without B's head")
        #expect(viewB.count == 5)
    }

    /// Appends to `view`'s file, as a writer holding the log key and group `keyID`'s key alone could, a commit of one
    /// put in that group's page that states `heads`.
    static func appendForgedCommit(_ view: Keychain, keyID: UInt8, heads: HeadsV3) throws {
        let log = try V3Keychain.log(view)
        let group = try #require(log.state.groups.byKeyID[keyID])
        let name = try #require(log.state.groups.names[keyID])
        let put = try KeychainV3GroupTests.stored(GenericPassword(service: "svc", account: "forged", password: "x", accessGroup: name))
        var generator = SystemRandomNumberGenerator()
        let head = view.head
        let record = try RecordV3Encoder.encode(
            kind: .commit, sequence: head.sequence + 1, part: 0, previousChain: head.chainValue,
            segments: RecordV3Encoder.pages([.put(id: try ItemID(bytes: [UInt8](repeating: 7, count: 16)), attributes: put, secret: [1])], keys: group),
            heads: heads, keys: log.state.keys, using: &generator)
        try log.state.log.append(
            record.bytes, committedEnd: log.state.log.writtenEnd + record.bytes.count, headSequence: head.sequence + 1, headChain: record.chainTag)
    }

    @Test("Every request outside the scope is refused with missingEntitlement (−34018), and the file is left as it was")
    func outsideTheScope() throws {
        let directory = TemporaryDirectory()
        let (_, path) = try Self.keychain(in: directory)
        let viewA = try V3Keychain.open(path, credential: Self.scopedA)
        let before = try fileBytes(path)
        let itemOfA = Query.genericPassword(service: "svc", account: "\(Self.groupA)-0")
        var ofB = Query(.genericPassword, limit: .all)
        ofB.attributes[.accessGroup] = .string(Self.groupB)
        var ofC = Query(.genericPassword, limit: .all)
        ofC.attributes[.accessGroup] = .string("com.example.never-made")
        let requests: [(String, String?, () throws -> Void)] = [
            ("add to B", Self.groupB, { try viewA.add(GenericPassword(service: "svc", account: "x", password: "x", accessGroup: Self.groupB)) }),
            ("add to a group no one made", "com.example.never-made",
             { try viewA.add(GenericPassword(service: "svc", account: "x", password: "x", accessGroup: "com.example.never-made")) }),
            ("add to the default group", "", { try viewA.add(GenericPassword(service: "svc", account: "x", password: "x")) }),
            ("find in B", Self.groupB, { _ = try viewA.search(ofB) }),
            ("find in a group no one made", "com.example.never-made", { _ = try viewA.search(ofC) }),
            ("update in B", Self.groupB, { _ = try viewA.update(ofB, setting: [.label: .string("x")]) }),
            ("move A's item to B", Self.groupB, { _ = try viewA.update(itemOfA, setting: [.accessGroup: .string(Self.groupB)]) }),
            ("delete in B", Self.groupB, { _ = try viewA.delete(ofB) }),
            ("delete if present in B", Self.groupB, { _ = try viewA.deleteIfPresent(ofB) }),
            ("a batch with one add outside", Self.groupB, {
                try viewA.batch { (batch) throws(KeychainError) in
                    try batch.add(GenericPassword(service: "svc", account: "inside", password: "x", accessGroup: Self.groupA))
                    try batch.add(GenericPassword(service: "svc", account: "outside", password: "x", accessGroup: Self.groupB))
                }
            }),
            ("add a credential", nil, { try viewA.addCredential(.password("another"), keyDerivation: KeychainV3CredentialTests.cheap) }),
            ("add a scoped credential", nil,
             { try viewA.addCredential(.password("another"), scope: .groups([Self.groupA]), keyDerivation: KeychainV3CredentialTests.cheap) }),
            ("remove a credential", nil, { try viewA.removeCredential(Self.scopedB) }),
            ("rotate the keys", nil, { try viewA.rotateMasterKey(credentials: [Self.scopedA]) }),
        ]
        var messages: [String: String] = [:]
        for (name, group, request) in requests {
            let error = #expect(throws: KeychainError.self, "\(name)") { try request() }
            guard case .missingEntitlement(let named, _)? = error else {
                Issue.record("\(name): \(String(describing: error)), not missingEntitlement")
                continue
            }
            #expect(named == group, "\(name)")
            #expect(error?.code == -34018)
            messages[name] = error?.description
        }
        // B, which exists, and a group no one made are refused in the same words: the refusal tells nothing of B.
        #expect(messages["add to B"]?.replacingOccurrences(of: Self.groupB, with: "G")
            == messages["add to a group no one made"]?.replacingOccurrences(of: "com.example.never-made", with: "G"))
        #expect(messages["find in B"]?.replacingOccurrences(of: Self.groupB, with: "G")
            == messages["find in a group no one made"]?.replacingOccurrences(of: "com.example.never-made", with: "G"))
        // A password change that renews keys: a scoped holder cannot give new keys to the other credentials, and says
        // which change it can make (its slot alone) and who can renew them.
        let rotating = #expect(throws: KeychainError.self) { try viewA.changePassword(from: "scoped to group a", to: "new") }
        guard case .invalidParameter(let reason)? = rotating else {
            Issue.record("a rotating password change by a scoped holder: \(String(describing: rotating))")
            return
        }
        #expect(reason.contains("changeCredentialKeepingKeys") && reason.contains("reaches the whole keychain"))
        #expect(try fileBytes(path) == before)
        #expect(viewA.count == 4)
    }

    /// Adds an item of B and one of the default group with the full holder, then flips a bit of B's page ciphertext in
    /// the file's tail chunk (after the frame, the segment's header and the page box's nonce): the chain tag covers the
    /// page's tag, not its ciphertext, so A's holder cannot see it; the tail chunk's parity can repair it. Returns the
    /// file's bytes as damaged and every item as the full holder had them.
    static func damageBInTailChunk(_ full: Keychain, at path: String) throws -> (bytes: [UInt8], items: [String]) {
        let log = try V3Keychain.log(full)
        let start = log.end
        try KeychainV3GroupTests.add(full, group: groupB, count: 1, from: 40)
        try KeychainV3GroupTests.add(full, group: "", count: 1, from: 40)
        let items = try snapshot(full)
        let damaged = HeaderRunShiftedFileHandle.physical(HealingLayout.physical(start + 27 + 9 + 12 + 5), pageCount: log.state.pageCount)
        var bytes = try fileBytes(path)
        bytes[damaged] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (bytes, items)
    }

    @Test("A scoped holder does not append over damage it cannot check: B's bytes in the last chunk, which the full holder then repairs")
    func noParityFromUncheckedBytes() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Self.keychain(in: directory)
        let (bytes, expected) = try Self.damageBInTailChunk(full, at: path)
        let viewA = try V3Keychain.open(path, credential: Self.scopedA)
        #expect(viewA.count == 4)
        let error = #expect(throws: KeychainError.self) {
            try viewA.add(GenericPassword(service: "svc", account: "after damage", password: "x", accessGroup: Self.groupA))
        }
        #expect(error?.description.contains("whole keychain") == true, "\(String(describing: error))")
        #expect(try fileBytes(path) == bytes, "the scoped holder wrote over damage it cannot check")
        // The full holder repairs the chunk from its parity and writes the repair back with its next change.
        let repairing = try V3Keychain.open(path)
        #expect(try Self.snapshot(repairing) == expected)
        try KeychainV3GroupTests.add(repairing, group: "", count: 1, from: 50)
        // Then A's holder appends, and everything is whole.
        try KeychainV3GroupTests.add(viewA, group: Self.groupA, count: 1, from: 50)
        #expect(try V3Keychain.open(path).count == 12 + 2 + 2)
    }

    @Test("A scoped credential's scope and the SecItem code of its refusals")
    func scopeAndCode() throws {
        #expect(KeychainError.missingEntitlement(group: "g", operation: "x").code == -34018)
        #expect(CredentialScope.groups(["a", ""]).contains(group: "") && !CredentialScope.groups(["a"]).contains(group: "b"))
        #expect(CredentialScope.full.contains(group: "anything") && CredentialScope.full.accessGroups == nil)
    }
}
