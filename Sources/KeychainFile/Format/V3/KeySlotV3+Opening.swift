@_spi(KeychainFileInternals) import KeychainCrypto

extension KeySlotV3 {
    /// Opens the slot with `credential`: its anchor, then each grant in order, each grant's key agreed with the root
    /// the step before proved (Docs/FormatVersion3.md §2.2).
    ///
    /// - Returns: the newest keys, or `nil` when the credential is not this slot's (its KEK does not match the
    ///   commitment, compared in constant time, or it is of the other kind).
    /// - Throws: `.corrupted` (at `slotOffset`) when the commitment matches but the anchor, the public key or a
    ///   grant does not verify, or sealed keys do not fit the slot: the slot was damaged or altered after it was
    ///   made for this credential. `.limitReached` from Argon2id's memory.
    func open(with credential: Credential, fileID: [UInt8], slotOffset: Int) throws(KeychainError) -> OpenedSlotV3? {
        guard credential.slotType == type else { return nil }
        let kek = try Self.keyEncryptionKey(for: credential, kdf: kdf, salt: salt, fileID: fileID)
        let expected = try SlotKeysV3.commitment(kek: kek, fileID: fileID, slotID: slotID)
        guard SymmetricKey(data: expected) == SymmetricKey(data: commitment) else { return nil }
        func corrupted(_ reason: String) -> KeychainError {
            .corrupted(offset: slotOffset, reason: "key slot \(HexText.lowercase(slotID)): \(reason)")
        }
        let anchorKey = try SlotKeysV3.anchorKey(kek: kek, fileID: fileID, slotID: slotID)
        guard var plaintext = anchor.open(key: anchorKey, authenticating: SlotKeysV3.anchorLabel + fileID + identity) else {
            throw corrupted("the credential matches the commitment but the anchor does not authenticate")
        }
        defer { plaintext.withUnsafeMutableBytes { secureWipe($0) } }
        guard plaintext.count >= 32 else { throw corrupted("the anchor is too short to hold the slot's agreement key") }
        let agreementKey = SymmetricKey(data: plaintext[0..<32])
        guard try SlotKeysV3.publicKey(for: agreementKey) == publicKey else {
            throw corrupted("the public key is not the anchor's agreement key's: it was replaced")
        }
        var keys: KeySetV3
        do throws(SlotProblemV3) {
            keys = try KeySetV3.decode(plaintext, from: 32, scope: scope, fileID: fileID)
        } catch {
            throw corrupted("the anchor's keys: \(error.reason)")
        }
        for (index, grant) in grants.enumerated() {
            let number = UInt8(index + 1)
            guard let first = SlotKeysV3.sharedSecret(agreementKey, grant.ephemeralPublicKey),
                  let second = SlotKeysV3.sharedSecret(agreementKey, keys.rootAgreementPublicKey) else {
                throw corrupted("grant \(number) names a public key of small order")
            }
            let key = try SlotKeysV3.grantKey(
                ephemeralSecret: first, rootSecret: second, ephemeralPublicKey: grant.ephemeralPublicKey,
                slotPublicKey: publicKey, fileID: fileID, slotID: slotID, number: number)
            guard var granted = grant.box.open(key: key, authenticating: grantAAD(fileID: fileID, number: number, ephemeralPublicKey: grant.ephemeralPublicKey)) else {
                throw corrupted("grant \(number) does not authenticate under the root the slot trusted before it")
            }
            defer { granted.withUnsafeMutableBytes { secureWipe($0) } }
            do throws(SlotProblemV3) {
                keys = try KeySetV3.decode(granted, scope: scope, fileID: fileID)
            } catch {
                throw corrupted("grant \(number)'s keys: \(error.reason)")
            }
        }
        return OpenedSlotV3(keys: keys, anchorKey: anchorKey, agreementKey: agreementKey, slotID: slotID, grantsOpened: grants.count)
    }
}
