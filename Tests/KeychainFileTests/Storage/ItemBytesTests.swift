import Foundation
import Testing
@testable import KeychainFile

/// The one heap block per live item (``ItemBytes``): items made from it read back what was written, a block a
/// batch reserves is sealed only for that batch's item, and blocks others still hold never change.
@Suite("ItemBytes")
struct ItemBytesTests {
    private static func attributes(_ account: String, service: String = "svc") -> ItemAttributes {
        try! GenericPassword(service: service, account: account, password: "").attributes
    }

    private static func secret(_ box: [UInt8], chain: [UInt8], sequence: UInt64 = 7) -> SealedSecret {
        SealedSecret(box: box, sequence: sequence, kind: .transaction, entryCount: 3, entryIndex: 1, previousChain: chain, entryByteCount: 99)
    }

    /// An item made from attributes and a secret in separate blocks copies both into one, and gives back
    /// equal values; one made from a block that already holds both keeps it.
    @Test func itemsReadBackWhatTheyWereMadeOf() throws {
        let attributes = Self.attributes("ann")
        let chain = (0..<16).map { UInt8($0 * 3) }
        let box = (0..<60).map { UInt8(255 - $0) }
        let secret = Self.secret(box, chain: chain)

        let item = StoredItem(id: try ItemID(bytes: [UInt8](repeating: 1, count: 16)), attributes: attributes, secret: secret, order: 5)
        #expect(item.attributes == attributes)
        #expect(item.attributes.hashValue == attributes.hashValue)
        #expect(item.secret == secret)
        #expect(Array(item.secret.box) == box)
        #expect(item.secret.previousChain == chain)
        #expect(item.secret.entryByteCount == 99 && item.secret.sequence == 7 && item.secret.entryIndex == 1)
        #expect(item.order == 5)
        // One block: both views read the same object; made again from them, the item keeps it.
        #expect(item.attributes.encoded.storage === item.secret.box.storage)
        let again = StoredItem(id: item.id, attributes: item.attributes, secret: item.secret, order: 6)
        #expect(again.attributes.encoded.storage === item.attributes.encoded.storage)
        // A secret sealed elsewhere is copied in; the item's attributes are unchanged.
        let other = Self.secret(box.reversed(), chain: chain.reversed(), sequence: 9)
        let replaced = item.replacingSecret(with: other)
        #expect(replaced.secret == other && replaced.attributes == attributes)
        #expect(replaced.attributes.encoded.storage !== item.attributes.encoded.storage)
        #expect(item.secret == secret, "the old item's block is unchanged")
    }

    /// Attributes are equal (and hash equally) when their bytes are, whichever block they sit in.
    @Test func attributesCompareByBytes() throws {
        let alone = Self.attributes("bob")
        let item = StoredItem(
            id: try ItemID(bytes: [UInt8](repeating: 2, count: 16)), attributes: alone, secret: Self.secret([1, 2, 3], chain: []), order: 0)
        #expect(item.attributes.encoded.storage !== alone.encoded.storage)
        #expect(item.attributes == alone)
        #expect(item.attributes.hashValue == alone.hashValue)
        #expect(Set([item.attributes, alone]).count == 1)
        #expect(item.attributes != Self.attributes("bobby"))
        #expect(item.attributes != Self.attributes("bob", service: "other"))
    }

    /// Each live item's attributes and secret share one block after adds, updates, a reopen and a compaction.
    @Test func liveItemsKeepOneBlock() throws {
        let directory = TemporaryDirectory()
        var keychain = try TestKeychain.create(in: directory)
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<30 { try batch.add(Self.attributes("a\(index)"), secret: Array("secret \(index)".utf8)) }
        }
        try keychain.add(Self.attributes("single"), secret: [9, 9])
        _ = try keychain.update(.genericPassword(service: "svc", account: "a3"), setting: [.label: .string("x")])
        _ = try keychain.update(.genericPassword(service: "svc", account: "a4"), setting: [:], secret: [4, 4, 4])
        func check(_ keychain: Keychain) {
            for item in keychain.index.itemsInAddedOrder() {
                #expect(item.attributes.encoded.storage === item.secret.box.storage)
                #expect(item.secret.box.storage.layout.isReserved == false)
            }
        }
        check(keychain)
        keychain = try Keychain.open(at: directory.file("test.kcf"), credential: TestKeychain.password)
        check(keychain)
        _ = try keychain.compact()
        check(keychain)
        #expect(try keychain.data(forService: "svc", account: "a4") == [4, 4, 4])
        #expect(try keychain.data(forService: "svc", account: "a3") == Array("secret 3".utf8))
    }

    /// Items someone still holds (a search result, say) never change, whatever the keychain seals afterwards:
    /// only a block a batch reserved for an item it adds is written after it is made.
    @Test func heldItemsNeverChange() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<20 { try batch.add(Self.attributes("h\(index)"), secret: Array("held \(index)".utf8)) }
        }
        let held = keychain.index.itemsInAddedOrder()
        let snapshot = held.map { (Array($0.attributes.encoded), Array($0.secret.box), $0.secret.previousChain) }
        // Same-sized secrets and attributes: a block written in place by mistake would fit.
        _ = try keychain.compact()
        _ = try keychain.update(.genericPassword(service: "svc", account: "h1"), setting: [:], secret: Array("hel! 1".utf8))
        try keychain.batch { (batch) throws(KeychainError) in
            _ = try batch.delete(.genericPassword(service: "svc", account: "h2"))
            try batch.add(Self.attributes("h2"), secret: Array("held 2".utf8))
        }
        _ = try keychain.compact()
        for (item, before) in zip(held, snapshot) {
            #expect(Array(item.attributes.encoded) == before.0)
            #expect(Array(item.secret.box) == before.1)
            #expect(item.secret.previousChain == before.2)
        }
        #expect(try keychain.data(forService: "svc", account: "h1") == Array("hel! 1".utf8))
    }

    /// Random batches of adds, updates and deletes — some of them failing part-way — against a model; the
    /// secrets and attributes read back match it, also after reopening and compacting.
    @Test func randomOperationsMatchAModel() throws {
        let directory = TemporaryDirectory()
        var keychain = try TestKeychain.create(in: directory)
        var random = TestRandom(seed: 0x1b7e5)
        var model: [String: (secret: [UInt8], label: String?)] = [:]
        func randomSecret() -> [UInt8] { (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) } }
        for round in 0..<120 {
            var staged = model
            let fails = Int.random(in: 0..<8, using: &random) == 0
            do throws(KeychainError) {
                try keychain.batch { (batch) throws(KeychainError) in
                    for _ in 0..<Int.random(in: 1...6, using: &random) {
                        let account = "acct\(Int.random(in: 0..<25, using: &random))"
                        let query = Query.genericPassword(service: "svc", account: account)
                        switch Int.random(in: 0..<4, using: &random) {
                        case 0, 1:
                            if staged[account] != nil {
                                #expect(throws: KeychainError.duplicateItem) { try batch.add(Self.attributes(account), secret: []) }
                            } else {
                                let secret = randomSecret()
                                try batch.add(Self.attributes(account), secret: secret)
                                staged[account] = (secret, nil)
                            }
                        case 2:
                            guard let current = staged[account] else { continue }
                            let label = Bool.random(using: &random) ? "label \(round)" : nil
                            let secret = Bool.random(using: &random) ? randomSecret() : nil
                            _ = try batch.update(query, setting: [.label: label.map { .string($0) } ?? .string("")], secret: secret)
                            staged[account] = (secret ?? current.secret, label ?? "")
                        default:
                            guard staged[account] != nil else { continue }
                            _ = try batch.delete(query)
                            staged[account] = nil
                        }
                    }
                    if fails { throw .invalidParameter("abandoned") }
                }
                model = staged
            } catch {
                #expect(fails && error == .invalidParameter("abandoned"))
            }
            if round % 40 == 39 {
                keychain = try Keychain.open(at: directory.file("test.kcf"), credential: TestKeychain.password)
            }
            if round % 50 == 49 { _ = try keychain.compact() }
            #expect(keychain.count == model.count)
            for (account, expected) in model {
                #expect(try keychain.data(forService: "svc", account: account) == expected.secret)
                let found = try keychain.find(GenericPassword.self, matching: .genericPassword(service: "svc", account: account))
                #expect(found.first?.label == expected.label)
            }
        }
    }

    /// Attributes handed out (search results, the attributes a typed item is built from) do not keep an
    /// item's large sealed secret alive after the item is gone.
    @Test func handedOutAttributesDoNotKeepTheSecret() throws {
        let keychain = try Keychain.inMemory()
        try keychain.add(GenericPassword(service: "big", account: "a", password: String(repeating: "x", count: 1_000_000)))
        try keychain.add(GenericPassword(service: "small", account: "a", password: "p"))
        let big = try #require(try keychain.search(.genericPassword(service: "big"), returning: [.attributes])[0].attributes)
        let small = try #require(try keychain.search(.genericPassword(service: "small"), returning: [.attributes])[0].attributes)
        _ = try keychain.delete(.genericPassword(service: "big"))
        _ = try keychain.compact()
        #expect(big.encoded.storage.capacity < 4096, "\(big.encoded.count) bytes of attributes keep a \(big.encoded.storage.capacity)-byte block")
        #expect(small.encoded.storage.layout.totalByteCount - small.encoded.count <= 256, "the documented bound (ItemAttributes.handedOutSurplusLimit)")
        #expect(big.string(.service) == "big" && small.string(.service) == "small")
    }

    /// A batch keeps the secret of an item it adds in the item's block, where the ciphertext goes: sealing
    /// turns it into ciphertext in place, and a batch that is abandoned wipes it, so that no plaintext secret
    /// stays in a block either way.
    @Test func reservedBlocksHoldNoPlaintextOnceTheBatchEnds() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        let secret = Array("a distinctive plaintext secret, 46 bytes long.".utf8)
        func containsSecret(_ block: ItemBytes) -> Bool {
            block.withBytes { bytes in
                bytes.count >= secret.count && (0...(bytes.count - secret.count)).contains { start in
                    secret.indices.allSatisfy { bytes[start + $0] == secret[$0] }
                }
            }
        }

        var staged: [ItemBytes] = []
        #expect(throws: KeychainError.duplicateItem) {
            try keychain.batch { (batch) throws(KeychainError) in
                for index in 0..<3 { try batch.add(Self.attributes("w\(index)"), secret: secret) }
                staged = try batch.matching(.genericPassword(service: "svc")).map(\.attributes.encoded.storage)
                // Before the batch ends the secret is in the blocks, and an update reads it back from there.
                #expect(staged.count == 3 && staged.allSatisfy(containsSecret))
                _ = try batch.update(.genericPassword(service: "svc", account: "w1"), setting: [.label: .string("l")])
                #expect(try batch.matching(.genericPassword(service: "svc", account: "w1")).count == 1)
                try batch.add(Self.attributes("w0"), secret: secret)  // a duplicate: the batch is abandoned
            }
        }
        #expect(staged.count == 3)
        for block in staged { #expect(!containsSecret(block), "an abandoned batch left a plaintext secret in a block") }
        #expect(keychain.count == 0)

        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<3 { try batch.add(Self.attributes("c\(index)"), secret: secret) }
            _ = try batch.update(.genericPassword(service: "svc", account: "c1"), setting: [.label: .string("l")])
        }
        let items = keychain.index.itemsInAddedOrder()
        #expect(items.count == 3)
        for item in items { #expect(!containsSecret(item.attributes.encoded.storage), "a committed block holds the plaintext") }
        for index in 0..<3 { #expect(try keychain.data(forService: "svc", account: "c\(index)") == secret) }
        let reopened = try Keychain.open(at: directory.file("test.kcf"), credential: TestKeychain.password)
        for index in 0..<3 { #expect(try reopened.data(forService: "svc", account: "c\(index)") == secret) }
    }
}
