import KeychainCrypto

extension Keychain {
    /// A short keyed fingerprint of an item's secret: the same secret of the same item gives the same fingerprint in
    /// every copy of this keychain, a changed secret a different one, and without the keychain's key it tells
    /// nothing about the secret — not even whether two items share one (SPEC.md §43.8).
    ///
    /// This is what `kcf diff-text` shows in place of a secret, so that `git diff` of a keychain shows that a
    /// password changed, but not what it was or became. The key is derived from the keychain's master key (in format
    /// version 3, from the key of the item's access group, so that a credential scoped to other groups cannot test
    /// guesses against it), which a credential rotation replaces: fingerprints made before one differ from those after.
    ///
    /// For example:
    /// ```swift
    /// let fingerprint = try keychain.secretFingerprint(of: Array("hunter2".utf8), itemID: id)
    /// print(fingerprint.map { String($0, radix: 16) })  // 8 bytes
    /// ```
    ///
    /// - Parameters:
    ///   - secret: The secret's bytes.
    ///   - itemID: The id of the item it is the secret of.
    /// - Returns: The fingerprint's 8 bytes.
    /// - Throws: `KeychainError.itemNotFound` in format version 3 when no live item has `itemID` (its group names the
    ///   key); `.missingEntitlement` when the credential does not reach its group; what catching up throws.
    public func secretFingerprint(of secret: [UInt8], itemID: ItemID) throws(KeychainError) -> [UInt8] {
        let key = try withRead { () throws(KeychainError) -> SymmetricKey in
            let label = Array("KeychainFile secret fingerprint".utf8) + log.fileID
            guard let v3 = log as? RecordLogV3 else {
                return SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: label, using: log.masterKey))
            }
            guard let item = index[itemID] else { throw .itemNotFound }
            let group = AccessGroupsV3.name(of: item.attributes)
            guard let keyID = v3.state.groups.keyID(named: group), let keys = v3.state.groups.byKeyID[keyID] else {
                throw .missingEntitlement(group: group, operation: "fingerprinting a secret")
            }
            return SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: label + [keyID], using: keys.secretKey))
        }
        return Array(HMAC<SHA256>.authenticationCode(for: itemID.bytes + secret, using: key).prefix(8))
    }
}
