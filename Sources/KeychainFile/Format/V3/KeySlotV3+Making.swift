@_spi(KeychainFileInternals) import KeychainCrypto

extension KeySlotV3 {
    /// A new slot for `credential`, its anchor holding `keys` (whose scope is the slot's), attested under `root`.
    ///
    /// - Throws: `.invalidParameter` when the KDF does not fit the credential, a password holds a code point
    ///   Unicode 15.0 does not assign, or `keys` have no valid scope; `.limitReached` from Argon2id's memory.
    static func make<Generator: RandomNumberGenerator>(
        for credential: Credential, kdf: SlotKDF, keys: KeySetV3, fileID: [UInt8], attestingWith root: SymmetricKey,
        using generator: inout Generator
    ) throws(KeychainError) -> KeySlotV3 {
        let slotID = randomBytes(16, using: &generator)
        let salt = randomBytes(32, using: &generator)
        let kek = try keyEncryptionKey(for: credential, kdf: kdf, salt: salt, fileID: fileID)
        let scope = keys.scope
        if case .groups(let keyIDs) = scope, !SlotScopeV3.isValid(keyIDs) {
            throw .invalidParameter("a slot opens the whole keychain or 1 … 255 groups with distinct key ids")
        }
        let unattested = KeySlotV3(
            type: credential.slotType, kdf: kdf, slotID: slotID, salt: salt,
            commitment: try SlotKeysV3.commitment(kek: kek, fileID: fileID, slotID: slotID),
            publicKey: try SlotKeysV3.publicKey(for: try SlotKeysV3.agreementPrivateKey(kek: kek, fileID: fileID, slotID: slotID)),
            scope: scope, attestation: [UInt8](repeating: 0, count: 32),
            anchor: SlotBoxV3(nonce: [], ciphertext: [], tag: []), grants: [])
        let anchorKey = try SlotKeysV3.anchorKey(kek: kek, fileID: fileID, slotID: slotID)
        let anchored = try unattested.reanchored(OpenedSlotV3(keys: keys, anchorKey: anchorKey, grantsOpened: 0), fileID: fileID, using: &generator)
        return try anchored.attested(by: root, fileID: fileID)
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
            return try kdf.deriveKey(from: UnicodeNFC.utf8(of: password), salt: salt, info: [])
        case (.key(let key), .hkdf):
            return try kdf.deriveKey(from: key.withUnsafeBytes { Array($0) }, salt: salt, info: SlotKeysV3.rawKeyLabel + fileID)
        default:
            throw .invalidParameter("KDF id \(kdf.id) cannot derive a key from this kind of credential")
        }
    }

    /// The slot with its anchor sealed anew over `opened`'s keys and its grants cut: what a holder writes once it
    /// has opened the slot through grants, so that the chain does not grow and the old roots stop counting.
    func reanchored<Generator: RandomNumberGenerator>(
        _ opened: OpenedSlotV3, fileID: [UInt8], using generator: inout Generator
    ) throws(KeychainError) -> KeySlotV3 {
        guard opened.keys.scope == scope else { throw .invalidParameter("the keys do not fit the slot's scope") }
        var plaintext = opened.keys.encode()
        defer { plaintext.withUnsafeMutableBytes { secureWipe($0) } }
        let anchor = try SlotBoxV3.seal(
            plaintext, key: opened.anchorKey, authenticating: SlotKeysV3.anchorLabel + fileID + identity, using: &generator)
        return KeySlotV3(
            type: type, kdf: kdf, slotID: slotID, salt: salt, commitment: commitment, publicKey: publicKey, scope: scope,
            attestation: attestation, anchor: anchor, grants: [])
    }

    /// The slot attested under `root`: what a full holder writes for a slot it made or verified.
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
        return Array(HMAC<SHA256>.authenticationCode(for: identity, using: key))
    }

    /// The slot with one more grant: `keys` (the new generation, of the slot's scope) sealed to its public key by
    /// the holder of `previousRoot`, the root the slot trusts now (its anchor's or its last grant's).
    ///
    /// - Throws: `.invalidParameter` when the keys do not fit the scope or the public key is of small order;
    ///   `.limitReached` when the slot holds ``maximumGrants`` already (its credential must open the keychain once,
    ///   which re-anchors it, before another rotation can reach it).
    func granting<Generator: RandomNumberGenerator>(
        _ keys: KeySetV3, previousRoot: SymmetricKey, fileID: [UInt8], using generator: inout Generator
    ) throws(KeychainError) -> KeySlotV3 {
        guard keys.scope == scope else { throw .invalidParameter("the keys do not fit the slot's scope") }
        guard grants.count < Self.maximumGrants else {
            throw .limitReached("key slot \(HexText.lowercase(slotID)) holds \(Self.maximumGrants) grants; its credential must open the keychain once before it can receive more")
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
        return KeySlotV3(
            type: type, kdf: kdf, slotID: slotID, salt: salt, commitment: commitment, publicKey: publicKey, scope: scope,
            attestation: attestation, anchor: anchor, grants: grants + [SlotGrantV3(ephemeralPublicKey: ephemeralPublic, box: box)])
    }

    /// "KCF3 slot grant" ‖ file id ‖ identity ‖ u8 number ‖ E.
    func grantAAD(fileID: [UInt8], number: UInt8, ephemeralPublicKey: [UInt8]) -> [UInt8] {
        SlotKeysV3.grantLabel + fileID + identity + [number] + ephemeralPublicKey
    }
}
