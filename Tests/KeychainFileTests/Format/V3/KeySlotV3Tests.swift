import Testing
@testable import KeychainFile
@_spi(KeychainFileInternals) import KeychainCrypto

/// Version 3's key slots (Docs/FormatVersion3.md §2.2) on their own: made, read back, opened through grants,
/// attested, and refused when a grant, the public key or the bytes were tampered with.
@Suite("Format v3: key slots with public keys, anchors, grants and attestations")
struct KeySlotV3Tests {
    static let fileID = [UInt8](repeating: 0x3F, count: 16)
    static let cheap = SlotKDF.pbkdf2(iterations: 1)
    static let corrupted = KeychainError.corrupted(offset: 0, reason: "")

    static func random(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return randomBytes(count, using: &generator)
    }

    static func fullKeys(root: SymmetricKey) throws -> KeySetV3 {
        try KeySetV3.full(logKey: SymmetricKey(size: .bits256), root: root, fileID: fileID)
    }

    static func bytes(_ key: SymmetricKey?) -> [UInt8]? { key?.withUnsafeBytes { Array($0) } }

    static func same(_ a: KeySetV3, _ b: KeySetV3) -> Bool {
        bytes(a.logKey) == bytes(b.logKey) && bytes(a.root) == bytes(b.root) && a.rootAgreementPublicKey == b.rootAgreementPublicKey
            && a.groups.map { [$0.keyID] + Array($0.name.utf8) + bytes($0.key)! } == b.groups.map { [$0.keyID] + Array($0.name.utf8) + bytes($0.key)! }
    }

    /// A slot for `credential` whose anchor holds the keys of root `r0`, and the keys of two rotations granted to it.
    static func slotWithTwoGrants(_ credential: Credential, kdf: SlotKDF = cheap) throws -> (slot: KeySlotV3, roots: [SymmetricKey], keys: [KeySetV3]) {
        var generator = SystemRandomNumberGenerator()
        let roots = (0..<3).map { _ in SymmetricKey(size: .bits256) }
        let keys = try roots.map { try fullKeys(root: $0) }
        var slot = try KeySlotV3.make(for: credential, kdf: kdf, keys: keys[0], fileID: fileID, attestingWith: roots[0], using: &generator)
        // As a rotating root holder does: grant under the root the slot is attested by, then attest under the new one.
        slot = try slot.granting(keys[1], previousRoot: roots[0], fileID: fileID, using: &generator).attested(by: roots[1], fileID: fileID)
        slot = try slot.granting(keys[2], previousRoot: roots[1], fileID: fileID, using: &generator).attested(by: roots[2], fileID: fileID)
        return (slot, roots, keys)
    }

    @Test("A slot reads back as written, and opens with its credential only", arguments: [
        Credential.password("slot password"), Credential.key(SymmetricKey(data: [UInt8](repeating: 7, count: 32))),
    ])
    func roundTrip(credential: Credential) throws {
        var generator = SystemRandomNumberGenerator()
        let root = SymmetricKey(size: .bits256)
        let keys = try Self.fullKeys(root: root)
        let kdf: SlotKDF = credential.slotType == .password ? Self.cheap : .hkdf
        let slot = try KeySlotV3.make(for: credential, kdf: kdf, keys: keys, fileID: Self.fileID, attestingWith: root, using: &generator)
        let encoded = slot.encoded
        #expect(encoded.count == slot.byteCount)
        #expect(Int(encoded[2]) << 8 | Int(encoded[3]) == encoded.count)
        let parsed = try KeySlotV3.parse([0xAA] + encoded + [0xBB], at: 1, fileOffset: 100)
        #expect(parsed == slot)
        let opened = try #require(try parsed.open(with: credential, fileID: Self.fileID, slotOffset: 101))
        #expect(Self.same(opened.keys, keys) && opened.grantsOpened == 0)
        let wrong: Credential = credential.slotType == .password ? .password("another password") : .key(SymmetricKey(size: .bits256))
        #expect(try parsed.open(with: wrong, fileID: Self.fileID, slotOffset: 101) == nil)
        // Another file's id opens nothing either: every derivation names the file.
        #expect(try parsed.open(with: credential, fileID: [UInt8](repeating: 1, count: 16), slotOffset: 101) == nil)
    }

    @Test("Grants open in order, each under the root the step before proved; re-anchoring cuts them")
    func grantChain() throws {
        let (slot, roots, keys) = try Self.slotWithTwoGrants(.password("pw"))
        let opened = try #require(try slot.open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0))
        #expect(opened.grantsOpened == 2 && Self.same(opened.keys, keys[2]))
        #expect(Self.bytes(opened.keys.root) == Self.bytes(roots[2]))
        var generator = SystemRandomNumberGenerator()
        let anchored = try slot.reanchored(opened, fileID: Self.fileID, using: &generator)
        #expect(anchored.grants.isEmpty && anchored.byteCount < slot.byteCount)
        let again = try #require(try KeySlotV3.parse(anchored.encoded, fileOffset: 0).open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0))
        #expect(again.grantsOpened == 0 && Self.same(again.keys, keys[2]))
    }

    @Test("A grant made without the trusted root (a writer holding only the log key) is refused as corrupted")
    func forgedGrant() throws {
        var generator = SystemRandomNumberGenerator()
        let root = SymmetricKey(size: .bits256)
        let slot = try KeySlotV3.make(for: .password("pw"), kdf: Self.cheap, keys: try Self.fullKeys(root: root), fileID: Self.fileID,
                                      attestingWith: root, using: &generator)
        // The forger knows the slot's public key (it is in the file) but not root's private agreement key.
        let forgerRoot = SymmetricKey(size: .bits256)
        // The library refuses to grant to a slot its root did not attest; a forger writes the attestation it needs.
        #expect(throws: KeychainError.invalidParameter("")) {
            _ = try slot.granting(try Self.fullKeys(root: forgerRoot), previousRoot: forgerRoot, fileID: Self.fileID, using: &generator)
        }
        let forged = try slot.attested(by: forgerRoot, fileID: Self.fileID)
            .granting(try Self.fullKeys(root: forgerRoot), previousRoot: forgerRoot, fileID: Self.fileID, using: &generator)
        #expect(throws: Self.corrupted) { _ = try forged.open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0) }

        // Replacing the first grant of a real chain with one from another root breaks the chain there.
        let (chain, roots, _) = try Self.slotWithTwoGrants(.password("pw"))
        let other = try KeySlotV3(
            type: chain.type, kdf: chain.kdf, slotID: chain.slotID, salt: chain.salt, commitment: chain.commitment,
            publicKey: chain.publicKey, scope: chain.scope, attestation: chain.attestation, anchor: chain.anchor, grants: [])
            .attested(by: forgerRoot, fileID: Self.fileID)
            .granting(try Self.fullKeys(root: roots[1]), previousRoot: forgerRoot, fileID: Self.fileID, using: &generator)
        let spliced = KeySlotV3(
            type: chain.type, kdf: chain.kdf, slotID: chain.slotID, salt: chain.salt, commitment: chain.commitment,
            publicKey: chain.publicKey, scope: chain.scope, attestation: chain.attestation, anchor: chain.anchor,
            grants: [other.grants[0], chain.grants[1]])
        #expect(throws: Self.corrupted) { _ = try spliced.open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0) }
        // Dropping the last grant is not detectable by the slot alone (the chain is a prefix): the record chain and
        // the header's keys catch an older key set. Dropping the first one is.
        let dropped = KeySlotV3(
            type: chain.type, kdf: chain.kdf, slotID: chain.slotID, salt: chain.salt, commitment: chain.commitment,
            publicKey: chain.publicKey, scope: chain.scope, attestation: chain.attestation, anchor: chain.anchor,
            grants: [chain.grants[1]])
        #expect(throws: Self.corrupted) { _ = try dropped.open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0) }
    }

    @Test("A replaced public key is caught by its credential and fails the attestation")
    func replacedPublicKey() throws {
        let (slot, roots, _) = try Self.slotWithTwoGrants(.password("pw"))
        #expect(try slot.isAttested(by: roots[2], fileID: Self.fileID))
        #expect(try !slot.isAttested(by: roots[1], fileID: Self.fileID))
        #expect(try slot.attested(by: roots[0], fileID: Self.fileID).isAttested(by: roots[0], fileID: Self.fileID))
        let attacker = try SlotKeysV3.publicKey(for: SymmetricKey(size: .bits256))
        let replaced = KeySlotV3(
            type: slot.type, kdf: slot.kdf, slotID: slot.slotID, salt: slot.salt, commitment: slot.commitment,
            publicKey: attacker, scope: slot.scope, attestation: slot.attestation, anchor: slot.anchor, grants: slot.grants)
        #expect(try !replaced.isAttested(by: roots[2], fileID: Self.fileID))
        #expect(throws: Self.corrupted) { _ = try replaced.open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0) }
    }

    @Test("A scoped slot holds its groups' keys and no root; keys of another scope are refused")
    func scoped() throws {
        var generator = SystemRandomNumberGenerator()
        let root = SymmetricKey(size: .bits256)
        let groups = [KeySetV3.Group(keyID: 2, name: "com.example.shared", key: SymmetricKey(size: .bits256)),
                      KeySetV3.Group(keyID: 9, name: "", key: SymmetricKey(size: .bits256))]
        let rho = try SlotKeysV3.rootAgreementPublicKey(root: root, fileID: Self.fileID)
        let keys = KeySetV3(logKey: SymmetricKey(size: .bits256), rootAgreementPublicKey: rho, root: nil, groups: groups)
        let slot = try KeySlotV3.make(for: .password("app"), kdf: Self.cheap, keys: keys, fileID: Self.fileID, attestingWith: root, using: &generator)
        #expect(slot.scope == .groups([2, 9]))
        let parsed = try KeySlotV3.parse(slot.encoded, fileOffset: 0)
        let opened = try #require(try parsed.open(with: .password("app"), fileID: Self.fileID, slotOffset: 0))
        #expect(Self.same(opened.keys, keys) && opened.keys.root == nil)
        #expect(throws: KeychainError.invalidParameter("")) {
            _ = try slot.granting(try Self.fullKeys(root: root), previousRoot: root, fileID: Self.fileID, using: &generator)
        }
        let next = KeySetV3(logKey: SymmetricKey(size: .bits256), rootAgreementPublicKey: rho, root: nil, groups: groups)
        let granted = try slot.granting(next, previousRoot: root, fileID: Self.fileID, using: &generator)
        #expect(Self.same(try #require(try granted.open(with: .password("app"), fileID: Self.fileID, slotOffset: 0)).keys, next))
    }

    @Test("Every flipped bit of a slot with grants is refused, looks like another credential's slot, or changes nothing the credential gets")
    func bitFlips() throws {
        let (slot, _, keys) = try Self.slotWithTwoGrants(.password("pw"))
        let encoded = slot.encoded
        let attestation = 129..<161
        var refused = 0, notOurs = 0, unchanged = 0
        for bit in 0..<(encoded.count * 8) {
            var damaged = encoded
            damaged[bit / 8] ^= 1 << (bit % 8)
            do {
                let parsed = try KeySlotV3.parse(damaged, fileOffset: 0)
                if let opened = try parsed.open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0) {
                    #expect(Self.same(opened.keys, keys[2]), "bit \(bit) changed the keys")
                    #expect(attestation.contains(bit / 8), "bit \(bit) outside the attestation went unnoticed")
                    unchanged += 1
                } else {
                    // Only what the credential's key is derived from or checked against can make it not this slot's.
                    #expect(bit / 8 < 96, "bit \(bit) of the public key, anchor or grants read as a wrong credential")
                    notOurs += 1
                }
            } catch {
                refused += 1
            }
        }
        // Only the attestation's bits (which the credential's holder does not check) leave the keys as they were.
        #expect(unchanged == 32 * 8)
        #expect(refused + notOurs + unchanged == encoded.count * 8)
    }

    @Test("Every truncation is refused as corrupted, never a crash", arguments: [0, 1])
    func truncations(grants: Int) throws {
        let (slot, _, _) = try Self.slotWithTwoGrants(.password("pw"))
        var generator = SystemRandomNumberGenerator()
        let opened = try #require(try slot.open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0))
        let encoded = grants == 0 ? try slot.reanchored(opened, fileID: Self.fileID, using: &generator).encoded : slot.encoded
        for length in 0..<encoded.count {
            #expect(throws: Self.corrupted) { _ = try KeySlotV3.parse(Array(encoded.prefix(length)), fileOffset: 0) }
        }
        // A length field that claims less or more than the slot's fields.
        for delta in [-1, 1] {
            var bytes = encoded + [0]
            let claimed = encoded.count + delta
            bytes[2] = UInt8(claimed >> 8); bytes[3] = UInt8(claimed & 0xFF)
            #expect(throws: Self.corrupted) { _ = try KeySlotV3.parse(bytes, fileOffset: 0) }
        }
    }

    @Test("No grant is made to a public key of small order, and such a grant is not opened")
    func smallOrder() throws {
        var generator = SystemRandomNumberGenerator()
        let root = SymmetricKey(size: .bits256)
        let slot = try KeySlotV3.make(for: .password("pw"), kdf: Self.cheap, keys: try Self.fullKeys(root: root), fileID: Self.fileID,
                                      attestingWith: root, using: &generator)
        let zeroPoint = [UInt8](repeating: 0, count: 32)
        // Attested, so that only the point's order can stop the grant.
        let small = try KeySlotV3(
            type: slot.type, kdf: slot.kdf, slotID: slot.slotID, salt: slot.salt, commitment: slot.commitment,
            publicKey: zeroPoint, scope: slot.scope, attestation: slot.attestation, anchor: slot.anchor, grants: [])
            .attested(by: root, fileID: Self.fileID)
        #expect(throws: KeychainError.invalidParameter("")) {
            _ = try small.granting(try Self.fullKeys(root: root), previousRoot: root, fileID: Self.fileID, using: &generator)
        }
        // A grant whose ephemeral key is the point 0, sealed under the key a reader that skipped the check would
        // compute (an all-zero first agreement): it authenticates unless the reader refuses the point.
        let next = try Self.fullKeys(root: SymmetricKey(size: .bits256))
        let rootSecret = try SlotKeysV3.rootAgreementPrivateKey(root: root, fileID: Self.fileID)
        let key = try SlotKeysV3.grantKey(
            ephemeralSecret: SymmetricKey(data: zeroPoint), rootSecret: try #require(SlotKeysV3.sharedSecret(rootSecret, slot.publicKey)),
            ephemeralPublicKey: zeroPoint, slotPublicKey: slot.publicKey, fileID: Self.fileID, slotID: slot.slotID, number: 1)
        var plaintext = next.encode()
        let box = try SlotBoxV3.seal(plaintext, key: key, authenticating: slot.grantAAD(fileID: Self.fileID, number: 1, ephemeralPublicKey: zeroPoint), using: &generator)
        plaintext.removeAll()
        let lowOrderEphemeral = KeySlotV3(
            type: slot.type, kdf: slot.kdf, slotID: slot.slotID, salt: slot.salt, commitment: slot.commitment,
            publicKey: slot.publicKey, scope: slot.scope, attestation: slot.attestation, anchor: slot.anchor,
            grants: [SlotGrantV3(ephemeralPublicKey: zeroPoint, box: box)])
        #expect(throws: Self.corrupted) { _ = try lowOrderEphemeral.open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0) }
    }

    @Test("A slot that holds the most grants refuses one more, and its holder's re-anchoring makes room")
    func grantLimit() throws {
        var generator = SystemRandomNumberGenerator()
        var roots = [SymmetricKey(size: .bits256)]
        var slot = try KeySlotV3.make(for: .password("pw"), kdf: Self.cheap, keys: try Self.fullKeys(root: roots[0]), fileID: Self.fileID,
                                      attestingWith: roots[0], using: &generator)
        for _ in 0..<KeySlotV3.maximumGrants {
            roots.append(SymmetricKey(size: .bits256))
            slot = try slot.granting(try Self.fullKeys(root: roots.last!), previousRoot: roots[roots.count - 2], fileID: Self.fileID, using: &generator)
                .attested(by: roots.last!, fileID: Self.fileID)
        }
        #expect(slot.byteCount <= KeySlotV3.maximumLength)
        let parsed = try KeySlotV3.parse(slot.encoded, fileOffset: 0)
        #expect(throws: KeychainError.limitReached("")) {
            _ = try parsed.granting(try Self.fullKeys(root: roots[0]), previousRoot: roots.last!, fileID: Self.fileID, using: &generator)
        }
        // A process that opened the slot before its last grant cannot re-anchor it from that opening.
        let stale = try #require(try slot.open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0))
        let oneMore = try slot.reanchored(stale, fileID: Self.fileID, using: &generator)
            .granting(try Self.fullKeys(root: roots[0]), previousRoot: roots.last!, fileID: Self.fileID, using: &generator)
        #expect(throws: KeychainError.invalidParameter("")) { _ = try oneMore.reanchored(stale, fileID: Self.fileID, using: &generator) }
        let opened = try #require(try parsed.open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0))
        #expect(opened.grantsOpened == KeySlotV3.maximumGrants && Self.bytes(opened.keys.root) == Self.bytes(roots.last!))
        _ = try slot.reanchored(opened, fileID: Self.fileID, using: &generator)
            .granting(try Self.fullKeys(root: roots[0]), previousRoot: roots.last!, fileID: Self.fileID, using: &generator)
    }

    @Test("A change of the slot's credential keeps its public key and attestation, so grants made later still reach it")
    func credentialChange() throws {
        var generator = SystemRandomNumberGenerator()
        let (slot, roots, keys) = try Self.slotWithTwoGrants(.password("old"))
        let opened = try #require(try slot.open(with: .password("old"), fileID: Self.fileID, slotOffset: 0))
        let changed = try slot.changingCredential(to: .password("new"), kdf: .pbkdf2(iterations: 2), opened: opened, fileID: Self.fileID, using: &generator)
        #expect(changed.publicKey == slot.publicKey && changed.attestation == slot.attestation && changed.grants.isEmpty)
        #expect(try changed.isAttested(by: roots[2], fileID: Self.fileID))
        #expect(try changed.open(with: .password("old"), fileID: Self.fileID, slotOffset: 0) == nil)
        let reopened = try #require(try changed.open(with: .password("new"), fileID: Self.fileID, slotOffset: 0))
        #expect(Self.same(reopened.keys, keys[2]))
        // The next rotation, by a root holder who never saw the new password, reaches it.
        let root3 = SymmetricKey(size: .bits256)
        let keys3 = try Self.fullKeys(root: root3)
        let granted = try changed.granting(keys3, previousRoot: roots[2], fileID: Self.fileID, using: &generator)
        #expect(Self.same(try #require(try granted.open(with: .password("new"), fileID: Self.fileID, slotOffset: 0)).keys, keys3))
        // An opening of another slot is refused.
        let other = try KeySlotV3.make(for: .password("other"), kdf: Self.cheap, keys: keys[2], fileID: Self.fileID, attestingWith: roots[2], using: &generator)
        #expect(throws: KeychainError.invalidParameter("")) {
            _ = try other.changingCredential(to: .password("x"), kdf: Self.cheap, opened: opened, fileID: Self.fileID, using: &generator)
        }
    }

    @Test("Keys that do not fit are refused before anything is sealed: another root's, too long a name, and slots past the length limit")
    func limits() throws {
        var generator = SystemRandomNumberGenerator()
        let root = SymmetricKey(size: .bits256)
        #expect(throws: KeychainError.invalidParameter("")) {
            _ = try KeySlotV3.make(for: .password("pw"), kdf: Self.cheap, keys: try Self.fullKeys(root: SymmetricKey(size: .bits256)),
                                   fileID: Self.fileID, attestingWith: root, using: &generator)
        }
        let rho = try SlotKeysV3.rootAgreementPublicKey(root: root, fileID: Self.fileID)
        let tooLong = KeySetV3(logKey: SymmetricKey(size: .bits256), rootAgreementPublicKey: rho, root: nil,
                               groups: [KeySetV3.Group(keyID: 1, name: String(repeating: "n", count: 256), key: SymmetricKey(size: .bits256))])
        #expect(throws: KeychainError.invalidParameter("")) {
            _ = try KeySlotV3.make(for: .password("pw"), kdf: Self.cheap, keys: tooLong, fileID: Self.fileID, attestingWith: root, using: &generator)
        }
        #expect(throws: KeychainError.invalidParameter("")) {
            _ = try KeySlotV3.make(for: .password("pw"), kdf: Self.cheap, keys: Self.fullKeys(root: root), fileID: [1, 2, 3], attestingWith: root, using: &generator)
        }
        // Two groups with long names: grants grow the slot until one more would pass the limit, which is refused.
        func scoped(_ root: SymmetricKey) throws -> KeySetV3 {
            KeySetV3(logKey: SymmetricKey(size: .bits256), rootAgreementPublicKey: try SlotKeysV3.rootAgreementPublicKey(root: root, fileID: Self.fileID), root: nil,
                     groups: [KeySetV3.Group(keyID: 1, name: String(repeating: "a", count: 200), key: SymmetricKey(size: .bits256)),
                              KeySetV3.Group(keyID: 2, name: String(repeating: "b", count: 200), key: SymmetricKey(size: .bits256))])
        }
        var roots = [root]
        var slot = try KeySlotV3.make(for: .password("pw"), kdf: Self.cheap, keys: try scoped(root), fileID: Self.fileID, attestingWith: root, using: &generator)
        var refusal: KeychainError? = nil
        for _ in 0..<KeySlotV3.maximumGrants {
            let next = SymmetricKey(size: .bits256)
            do {
                slot = try slot.granting(try scoped(next), previousRoot: roots.last!, fileID: Self.fileID, using: &generator).attested(by: next, fileID: Self.fileID)
                roots.append(next)
            } catch {
                refusal = error as? KeychainError
                break
            }
        }
        #expect(refusal == .limitReached(""), "\(String(describing: refusal))")
        #expect(slot.byteCount <= KeySlotV3.maximumLength && slot.grants.count < KeySlotV3.maximumGrants)
        #expect(try KeySlotV3.parse(slot.encoded, fileOffset: 0).open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0) != nil)
    }
}
