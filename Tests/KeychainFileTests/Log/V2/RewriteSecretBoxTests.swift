import Foundation
import Testing
@testable import KeychainFile

/// What a version 2 rewrite does with secret boxes (SPEC §26.6): with the master key kept, each live item's box
/// is copied as it is — no nonce spent, no secret decrypted — after its tag is checked; with a new master key
/// every secret is sealed anew.
@Suite("Format version 2: secret boxes across a rewrite")
struct RewriteSecretBoxTests {
    /// The sealed box of every live item, by item id.
    static func boxes(_ keychain: Keychain) -> [ItemID: [UInt8]] {
        keychain.withLock {
            Dictionary(uniqueKeysWithValues: keychain.index.itemsInAddedOrder().map { ($0.id, Array($0.secret.box)) })
        }
    }

    /// A version 2 keychain with 60 items, 10 of them updated and 10 deleted.
    static func churned(_ directory: TemporaryDirectory) throws -> (Keychain, [String: [UInt8]]) {
        let keychain = try V2Keychain.create(in: directory)
        var expected = try V2Keychain.fill(keychain, count: 60, perBatch: 20)
        for number in 0..<10 {
            let secret = Array("replaced \(number)".utf8)
            try keychain.update(.genericPassword(service: "svc", account: "user\(number)"), setting: [:], secret: secret)
            expected["user\(number)"] = secret
        }
        for number in 50..<60 {
            try keychain.delete(.genericPassword(service: "svc", account: "user\(number)"))
            expected.removeValue(forKey: "user\(number)")
        }
        return (keychain, expected)
    }

    @Test("Compaction writes every live secret box byte for byte as it was, and the new file opens with every secret")
    func compactionCopiesBoxes() throws {
        let directory = TemporaryDirectory()
        let (keychain, expected) = try Self.churned(directory)
        let before = Self.boxes(keychain)
        #expect(before.count == 50)
        try keychain.compact()
        let after = Self.boxes(keychain)
        #expect(after == before)
        // In the new file, not only in memory: each box's tag is there, and a fresh open reads every secret.
        let windows = windows16(try fileBytes(directory.file("v2.kcf")))
        #expect(before.values.allSatisfy { windows.contains(Array($0.suffix(16))) })
        #expect(try liveSecrets(V2Keychain.open(directory.file("v2.kcf"))) == expected)
        #expect(try liveSecrets(keychain) == expected)
    }

    @Test("A new master key seals every secret anew, and the old boxes are gone from the file")
    func rotationSealsAnew() throws {
        let directory = TemporaryDirectory()
        let (keychain, expected) = try Self.churned(directory)
        let before = Self.boxes(keychain)
        try keychain.rotateMasterKey(credentials: [TestKeychain.password], iterations: TestKeychain.fastOptions.passwordIterations)
        let after = Self.boxes(keychain)
        #expect(Set(after.keys) == Set(before.keys))
        #expect(after.allSatisfy { before[$0.key] != $0.value })
        let windows = windows16(try fileBytes(directory.file("v2.kcf")))
        #expect(!before.values.contains { windows.contains(Array($0.suffix(16))) })
        #expect(try liveSecrets(V2Keychain.open(directory.file("v2.kcf"))) == expected)
    }

    @Test("A box that no longer authenticates in memory stops the compaction before the file is replaced")
    func damagedBoxInMemoryRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v2.kcf")
        let (keychain, expected) = try Self.churned(directory)
        let fileBefore = try fileBytes(path)
        // One item's secret, as held in memory, with a flipped ciphertext bit.
        keychain.withLock {
            let position = keychain.index.positionsInAddedOrder()[5]
            let secret = keychain.index.item(atPosition: Int(position)).secret
            var box = Array(secret.box)
            box[12] ^= 0x01
            keychain.index.replaceSecret(
                atPosition: Int(position),
                with: SealedSecret(
                    box: box, sequence: secret.sequence, kind: secret.kind, entryCount: secret.entryCount,
                    entryIndex: secret.entryIndex, previousChain: secret.previousChain, entryByteCount: secret.entryByteCount))
        }
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try keychain.compact() }
        #expect(try fileBytes(path) == fileBefore)
        #expect(try liveSecrets(V2Keychain.open(path)) == expected)
    }
}
