@_spi(KeychainFileInternals) import KeychainCrypto

extension KeySlotV3 {
    /// A new slot for `credential`, with a random agreement key pair, its anchor holding `keys` (whose scope becomes
    /// the slot's), attested under `root`, the keychain's current root key.
    ///
    /// - Throws: `.invalidParameter` when the KDF does not fit the credential, a password holds a code point
    ///   Unicode 15.0 does not assign, or `keys` are malformed or not `root`'s generation (a full set holds `root`,
    ///   a scoped set `root`'s `ρ`); `.limitReached` when the slot would pass ``maximumLength``, or from Argon2id's
    ///   memory.
    static func make<Generator: RandomNumberGenerator>(
        for credential: Credential, kdf: SlotKDF, keys: KeySetV3, fileID: [UInt8], attestingWith root: SymmetricKey,
        using generator: inout Generator
    ) throws(KeychainError) -> KeySlotV3 {
        try makeOpened(for: credential, kdf: kdf, keys: keys, fileID: fileID, attestingWith: root, using: &generator).slot
    }

    /// ``make(for:kdf:keys:fileID:attestingWith:using:)``, with the slot's opening as its credential would open it:
    /// for the log that creates a file, which keeps it to re-anchor the slot later (``OwnSlotV3``).
    static func makeOpened<Generator: RandomNumberGenerator>(
        for credential: Credential, kdf: SlotKDF, keys: KeySetV3, fileID: [UInt8], attestingWith root: SymmetricKey,
        using generator: inout Generator
    ) throws(KeychainError) -> OwnSlotV3 {
        try check(keys, fileID: fileID)
        guard try keys.rootAgreementPublicKey == SlotKeysV3.rootAgreementPublicKey(root: root, fileID: fileID) else {
            throw .invalidParameter("the keys are not of the root key that attests the slot")
        }
        let slotID = randomBytes(16, using: &generator)
        let agreementKey = SymmetricKey(size: .bits256, using: &generator)
        let publicKey = try SlotKeysV3.publicKey(for: agreementKey)
        let draft = KeySlotV3(
            type: credential.slotType, kdf: kdf, slotID: slotID, salt: [], commitment: [], publicKey: publicKey,
            scope: keys.scope, attestation: [UInt8](repeating: 0, count: 32),
            anchor: SlotBoxV3(nonce: [], ciphertext: [], tag: []), grants: [])
        let opened = OpenedSlotV3(keys: keys, anchorKey: SymmetricKey(size: .bits256), agreementKey: agreementKey, slotID: slotID, grantsOpened: 0)
        let made = try draft.changingCredentialOpened(to: credential, kdf: kdf, opened: opened, fileID: fileID, using: &generator)
        return OwnSlotV3(slot: try made.slot.attested(by: root, fileID: fileID), opened: made.opened)
    }

    /// The slot opened by a new credential (a password change): new salt, KDF and commitment, and the anchor sealed
    /// anew under the new credential over `opened`'s keys and agreement key, grants cut. The public identity (slot
    /// id, `P`, scope) stays, so the attestation still holds and root holders can go on granting to the slot.
    ///
    /// - Throws: `.invalidParameter` when `opened` is not an opening of this slot as it stands, or for the
    ///   credential as ``make(for:kdf:keys:fileID:attestingWith:using:)``; `.limitReached` as it.
    func changingCredential<Generator: RandomNumberGenerator>(
        to credential: Credential, kdf: SlotKDF, opened: OpenedSlotV3, fileID: [UInt8], using generator: inout Generator
    ) throws(KeychainError) -> KeySlotV3 {
        try changingCredentialOpened(to: credential, kdf: kdf, opened: opened, fileID: fileID, using: &generator).slot
    }

    /// ``changingCredential(to:kdf:opened:fileID:using:)``, with the slot's opening by the new credential.
    func changingCredentialOpened<Generator: RandomNumberGenerator>(
        to credential: Credential, kdf: SlotKDF, opened: OpenedSlotV3, fileID: [UInt8], using generator: inout Generator
    ) throws(KeychainError) -> OwnSlotV3 {
        try checkCurrent(opened)
        let salt = randomBytes(32, using: &generator)
        let kek = try Self.keyEncryptionKey(for: credential, kdf: kdf, salt: salt, fileID: fileID)
        let changed = KeySlotV3(
            type: credential.slotType, kdf: kdf, slotID: slotID, salt: salt,
            commitment: try SlotKeysV3.commitment(kek: kek, fileID: fileID, slotID: slotID), publicKey: publicKey,
            scope: scope, attestation: attestation, anchor: anchor, grants: grants)
        let reopened = OpenedSlotV3(
            keys: opened.keys, anchorKey: try SlotKeysV3.anchorKey(kek: kek, fileID: fileID, slotID: slotID),
            agreementKey: opened.agreementKey, slotID: slotID, grantsOpened: grants.count)
        return try OwnSlotV3(slot: changed, opened: reopened).reanchored(on: reopened.keys, fileID: fileID, using: &generator)
    }

    /// The key-encryption key of `credential` under `kdf` and `salt`: the KDF over a password's NFC UTF-8, or HKDF
    /// over a raw key with info "KCF3 raw-key slot" ‖ file id.
    static func keyEncryptionKey(
        for credential: Credential, kdf: SlotKDF, salt: [UInt8], fileID: [UInt8]
    ) throws(KeychainError) -> SymmetricKey {
        try credential.validate()
        switch (credential, kdf) {
        case (.password(let password), .pbkdf2), (.password(let password), .argon2id):
            if let scalar = UnicodeAssignedScalars.firstUnassigned(in: password) {
                throw .invalidParameter(
                    "the password holds U+\(String(scalar.value, radix: 16, uppercase: true)), which Unicode 15.0 does not assign; its normal form could change in a later version, so it cannot protect a key slot")
            }
            var secret = UnicodeNFC.utf8(of: password)
            defer { secret.withUnsafeMutableBytes { secureWipe($0) } }
            return try kdf.deriveKey(from: secret, salt: salt, info: [])
        case (.key(let key), .hkdf):
            var secret = key.withUnsafeBytes { Array($0) }
            defer { secret.withUnsafeMutableBytes { secureWipe($0) } }
            return try kdf.deriveKey(from: secret, salt: salt, info: SlotKeysV3.rawKeyLabel + fileID)
        default:
            throw .invalidParameter("KDF id \(kdf.id) cannot derive a key from this kind of credential")
        }
    }

    /// The slot with its anchor sealed anew over `opened`'s keys and its grants cut: what a holder writes once it
    /// has opened the slot through grants, so that the chain does not grow and the old roots stop counting.
    ///
    /// - Throws: `.invalidParameter` when `opened` is not an opening of this slot with every grant it holds now
    ///   (re-anchoring from it would cut a grant its holder never read); `.limitReached` past ``maximumLength``.
    func reanchored<Generator: RandomNumberGenerator>(
        _ opened: OpenedSlotV3, fileID: [UInt8], using generator: inout Generator
    ) throws(KeychainError) -> KeySlotV3 {
        try checkCurrent(opened)
        guard opened.keys.scope == scope else { throw .invalidParameter("the keys do not fit the slot's scope") }
        var plaintext = opened.agreementKey.withUnsafeBytes { Array($0) }
        plaintext.reserveCapacity(32 + 98 + opened.keys.groups.reduce(0) { $0 + 35 + $1.name.utf8.count })
        var keyBytes = opened.keys.encode()
        plaintext.append(contentsOf: keyBytes)
        keyBytes.withUnsafeMutableBytes { secureWipe($0) }
        defer { plaintext.withUnsafeMutableBytes { secureWipe($0) } }
        let anchor = try SlotBoxV3.seal(
            plaintext, key: opened.anchorKey, authenticating: SlotKeysV3.anchorLabel + fileID + identity, using: &generator)
        return try KeySlotV3(
            type: type, kdf: kdf, slotID: slotID, salt: salt, commitment: commitment, publicKey: publicKey, scope: scope,
            attestation: attestation, anchor: anchor, grants: []).checkedLength()
    }

    /// The slot attested under `root`: what a full holder writes for a slot it made, or granted to after checking
    /// its attestation under the root before.
    func attested(by root: SymmetricKey, fileID: [UInt8]) throws(KeychainError) -> KeySlotV3 {
        KeySlotV3(
            type: type, kdf: kdf, slotID: slotID, salt: salt, commitment: commitment, publicKey: publicKey, scope: scope,
            attestation: try expectedAttestation(root: root, fileID: fileID), anchor: anchor, grants: grants)
    }

    /// Whether the attestation verifies under `root` (compared in constant time): only then may a rotating holder
    /// grant keys to the slot's public key.
    func isAttested(by root: SymmetricKey, fileID: [UInt8]) throws(KeychainError) -> Bool {
        SymmetricKey(data: try expectedAttestation(root: root, fileID: fileID)) == SymmetricKey(data: attestation)
    }

    private func expectedAttestation(root: SymmetricKey, fileID: [UInt8]) throws(KeychainError) -> [UInt8] {
        let key = try SlotKeysV3.attestationKey(root: root, fileID: fileID)
        return Array(HMAC<SHA256>.authenticationCode(for: publicIdentity, using: key))
    }

    /// The slot with one more grant: `keys` (the new generation, of the slot's scope) sealed to its public key by
    /// the holder of `previousRoot`, the root the slot trusts now (its anchor's or its last grant's), under which
    /// its attestation must verify.
    ///
    /// - Throws: `.invalidParameter` when the attestation does not verify under `previousRoot`, the keys are
    ///   malformed or not of the slot's scope, or the public key is of small order; `.limitReached` when the slot
    ///   holds ``maximumGrants`` already or would pass ``maximumLength`` (a change of its credential re-anchors it,
    ///   which empties its grants; opening does not).
    func granting<Generator: RandomNumberGenerator>(
        _ keys: KeySetV3, previousRoot: SymmetricKey, fileID: [UInt8], using generator: inout Generator
    ) throws(KeychainError) -> KeySlotV3 {
        guard try isAttested(by: previousRoot, fileID: fileID) else {
            throw .invalidParameter("key slot \(HexText.lowercase(slotID)) is not attested by the current root key: no key is granted to it")
        }
        try Self.check(keys, fileID: fileID)
        guard keys.scope == scope else { throw .invalidParameter("the keys do not fit the slot's scope") }
        guard grants.count < Self.maximumGrants else {
            throw .limitReached("key slot \(HexText.lowercase(slotID)) holds \(Self.maximumGrants) grants, as many as a slot takes: compact the keychain once opened with that credential (kcf compact), or change it (a password change, or a new raw key; for a credential scoped to access groups, a change keeping keys: changeCredentialKeepingKeys, kcf change-password --keep-keys) — either re-anchors the slot and empties its grants — before keys can be granted to it again")
        }
        let number = UInt8(grants.count + 1)
        let ephemeral = SymmetricKey(size: .bits256, using: &generator)
        let ephemeralPublic = try SlotKeysV3.publicKey(for: ephemeral)
        let rootSecret = try SlotKeysV3.rootAgreementPrivateKey(root: previousRoot, fileID: fileID)
        guard let first = SlotKeysV3.sharedSecret(ephemeral, publicKey), let second = SlotKeysV3.sharedSecret(rootSecret, publicKey) else {
            throw .invalidParameter("key slot \(HexText.lowercase(slotID))'s public key is of small order: no key can be granted to it")
        }
        let key = try SlotKeysV3.grantKey(
            ephemeralSecret: first, rootSecret: second, ephemeralPublicKey: ephemeralPublic, slotPublicKey: publicKey,
            fileID: fileID, slotID: slotID, number: number)
        var plaintext = keys.encode()
        defer { plaintext.withUnsafeMutableBytes { secureWipe($0) } }
        let box = try SlotBoxV3.seal(plaintext, key: key, authenticating: grantAAD(fileID: fileID, number: number, ephemeralPublicKey: ephemeralPublic), using: &generator)
        return try KeySlotV3(
            type: type, kdf: kdf, slotID: slotID, salt: salt, commitment: commitment, publicKey: publicKey, scope: scope,
            attestation: attestation, anchor: anchor, grants: grants + [SlotGrantV3(ephemeralPublicKey: ephemeralPublic, box: box)])
            .checkedLength()
    }

    /// "KCF3 slot grant" ‖ file id ‖ public identity ‖ u8 number ‖ E.
    func grantAAD(fileID: [UInt8], number: UInt8, ephemeralPublicKey: [UInt8]) -> [UInt8] {
        SlotKeysV3.grantLabel + fileID + publicIdentity + [number] + ephemeralPublicKey
    }

    /// Refuses keys that cannot be sealed in a slot.
    private static func check(_ keys: KeySetV3, fileID: [UInt8]) throws(KeychainError) {
        do throws(SlotProblemV3) {
            try keys.validate(fileID: fileID)
        } catch {
            throw .invalidParameter(error.reason)
        }
    }

    /// Refuses an opening of another slot, or one made before the slot received its latest grants.
    private func checkCurrent(_ opened: OpenedSlotV3) throws(KeychainError) {
        guard opened.slotID == slotID, opened.grantsOpened == grants.count else {
            throw .invalidParameter("key slot \(HexText.lowercase(slotID)) changed since it was opened (or another slot was): open it again")
        }
    }

    /// The slot, refused when it would be longer than a reader takes.
    private func checkedLength() throws(KeychainError) -> KeySlotV3 {
        guard byteCount <= Self.maximumLength else {
            throw .limitReached("key slot \(HexText.lowercase(slotID)) would be \(byteCount) bytes, more than \(Self.maximumLength)")
        }
        return self
    }
}
