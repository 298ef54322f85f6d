import KeychainCrypto

/// A key slot of a keychain's header: one credential that opens it (SPEC.md §5).
public struct KeySlotInfo: Sendable, Hashable, CustomStringConvertible {
    /// What kind of credential the slot takes.
    public enum Kind: Sendable, Hashable {
        /// A password, stretched with PBKDF2-HMAC-SHA256 at this many iterations.
        case password(iterations: UInt32)
        /// A 32-byte application key.
        case rawKey
        /// A password, stretched with Argon2id (format version 2's KDF id 3).
        case passwordArgon2id(memoryKiB: UInt32, passes: UInt32, lanes: UInt8)
    }

    /// The slot's random 16-byte id, which names it for ``Keychain/removeKeySlot(id:)``.
    public let id: [UInt8]
    /// The credential kind.
    public let kind: Kind
    /// What the credential reaches: the whole keychain (every slot of format versions 1 and 2), or some access
    /// groups of a version 3 keychain. A group the credential that opened this keychain does not reach is named by
    /// its key id, as "(key id 3)": only its holders know its name.
    public private(set) var scope: CredentialScope = .full
    /// How many grants the slot holds (format version 3; always 0 before): new keys given to it by other holders'
    /// key rotations and added groups since its own credential last rewrote the file.
    public private(set) var grants = 0
    /// How many more grants the slot takes: a slot holds at most ``maximumGrants`` and 8,192 bytes, and each grant
    /// is about as long as its anchor (a slot scoped to many groups with long names fills its bytes first). A
    /// rotation or an added group that would give it one more than it takes is refused, naming it.
    public private(set) var grantsLeft = KeySlotInfo.maximumGrants

    /// The most grants a key slot holds (format version 3, Docs/FormatVersion3.md §2.2).
    public static let maximumGrants = KeySlotV3.maximumGrants
    /// From how few grants left on ``isNearGrantLimit`` says to empty the slot: 8, as at 24 of 32.
    public static let grantsLeftWarning = 8

    /// Whether the slot takes ``grantsLeftWarning`` more grants or fewer: it should be emptied soon — a rewrite by a
    /// slot's own holder (a compaction with its credential) empties it of grants — before a rotation or an added
    /// group is refused for it.
    public var isNearGrantLimit: Bool { grantsLeft <= Self.grantsLeftWarning }

    init(_ slot: KeySlot) {
        id = slot.slotID
        kind = slot.type == .password ? .password(iterations: slot.iterations) : .rawKey
    }

    init(_ slot: HeaderKeySlot) {
        switch slot {
        case .legacy(let legacy):
            self.init(legacy)
        case .committed(let committed):
            switch committed.kdf {
            case .pbkdf2(let iterations): self.init(id: committed.slotID, kind: .password(iterations: iterations))
            case .hkdf: self.init(id: committed.slotID, kind: .rawKey)
            case .argon2id(let memory, let passes, let lanes):
                self.init(id: committed.slotID, kind: .passwordArgon2id(memoryKiB: memory, passes: passes, lanes: lanes))
            }
        }
    }

    /// - Parameter names: the name of each group the opener reaches, by key id.
    init(_ slot: KeySlotV3, names: [UInt8: String] = [:]) {
        switch slot.kdf {
        case .pbkdf2(let iterations): self.init(id: slot.slotID, kind: .password(iterations: iterations))
        case .hkdf: self.init(id: slot.slotID, kind: .rawKey)
        case .argon2id(let memory, let passes, let lanes):
            self.init(id: slot.slotID, kind: .passwordArgon2id(memoryKiB: memory, passes: passes, lanes: lanes))
        }
        if case .groups(let keyIDs) = slot.scope {
            scope = .groups(keyIDs.map { names[$0] ?? "(key id \($0))" })
        }
        grants = slot.grants.count
        // A grant holds E (32) and a box over the key set; the anchor a box over x (32) and the same key set.
        let byGrants = Self.maximumGrants - grants
        let byBytes = (KeySlotV3.maximumLength - slot.byteCount) / max(1, slot.anchor.byteCount)
        grantsLeft = max(0, min(byGrants, byBytes))
    }

    private init(id: [UInt8], kind: Kind) {
        self.id = id
        self.kind = kind
    }

    /// What to do about a slot near its grant limit (``isNearGrantLimit``), as ``description`` and kcf say it;
    /// `nil` for any other slot.
    public var grantWarning: String? {
        guard isNearGrantLimit else { return nil }
        return "\(grants) grants, room for \(grantsLeft) more: compact the keychain with this slot's own credential soon, "
            + "or remove the slot; once it is full, key rotations and added groups are refused"
    }

    /// The id in lowercase hexadecimal, as ``description`` and the errors that name a slot write it.
    var hexID: String { HexText.lowercase(id) }

    public var description: String {
        let hex = hexID
        let scoped = (scope.accessGroups.map { ", scoped to access groups \($0.map { "\"\($0)\"" }.joined(separator: ", "))" } ?? "")
            + (grantWarning.map { "; \($0)" } ?? "")
        switch kind {
        case .password(let iterations): return "\(hex): password, \(iterations) PBKDF2 iterations\(scoped)"
        case .rawKey: return "\(hex): raw key\(scoped)"
        case .passwordArgon2id(let memory, let passes, let lanes):
            return "\(hex): password, Argon2id with \(memory) KiB, \(passes) passes, \(lanes) lanes\(scoped)"
        }
    }
}

/// Credential changes. Each rewrites the file in a new epoch exactly as ``Keychain/compact()`` does (SPEC.md
/// §15.2): after a crash at any point either the old credentials or the new ones open the file, never neither.
/// The file is compacted as a side effect, and a file of format version 1 becomes version 2 in the same rewrite
/// (unless ``Keychain/keepsFormatVersion`` is set); a change that is refused leaves it as it was.
extension Keychain {
    /// The key slots of the header, in order.
    ///
    /// - Throws: What catching up with other processes throws.
    public func keySlots() throws(KeychainError) -> [KeySlotInfo] {
        try withRead { () throws(KeychainError) -> [KeySlotInfo] in log.keySlotInfos() }
    }

    /// Adds a key slot: afterwards `credential` opens the keychain too.
    ///
    /// For example:
    /// ```swift
    /// try keychain.addCredential(.key(SymmetricKey(size: .bits256)))   // a recovery key
    /// try keychain.addCredential(.password("backup phrase"), keyDerivation: .pbkdf2(.standard))
    /// ```
    ///
    /// - Parameters:
    ///   - credential: The new password or 32-byte key.
    ///   - keyDerivation: How a password's key is derived (``PasswordKeyDerivation/standard`` by default).
    /// - Returns: The new slot.
    /// - Throws: `KeychainError.invalidParameter` for an empty password, a key of the wrong size, a credential
    ///   that opens the keychain already (a second slot for it would outlive ``removeCredential(_:)``), or
    ///   Argon2id for a file kept at format version 1; `.limitReached` past 16 slots, 20,000,000 PBKDF2 iterations
    ///   or 2²⁶ KiB of Argon2id memory × passes in all; `.io`.
    @discardableResult
    public func addCredential(
        _ credential: Credential, keyDerivation: PasswordKeyDerivation = .standard
    ) throws(KeychainError) -> KeySlotInfo {
        try withWrite { () throws(KeychainError) -> KeySlotInfo in
            guard let added = try rewriteLocked(changing: .add(credential, keyDerivation: keyDerivation)) else {
                throw .invalidParameter("internal error: a key slot was added but not described")
            }
            return added
        }
    }

    /// Adds a credential that reaches the whole keychain (``CredentialScope/full``, as ``addCredential(_:keyDerivation:)``)
    /// or only some access groups of a format version 3 keychain (Docs/FormatVersion3.md §2.3): a scoped credential's
    /// slot is granted the log key and those groups' keys, never the root key, so that a keychain opened with it
    /// cannot decrypt, count or tell apart other groups' items, and refuses every request outside its groups with
    /// ``KeychainError/missingEntitlement(group:operation:)``.
    ///
    /// For example, two programs sharing one file and one group, each with private items:
    /// ```swift
    /// try keychain.addCredential(.password(mailSecret), scope: .groups(["TEAMID.mail", "TEAMID.shared"]))
    /// try keychain.addCredential(.password(chatSecret), scope: .groups(["TEAMID.chat", "TEAMID.shared"]))
    /// ```
    ///
    /// - Parameters:
    ///   - credential: The new password or 32-byte key.
    ///   - scope: What it reaches: every group named must hold items already (the default group, the empty name,
    ///     always exists).
    ///   - keyDerivation: How a password's key is derived.
    /// - Returns: The new slot.
    /// - Throws: `.invalidParameter` for a scope of no group, a group the keychain does not have, a scope on a
    ///   keychain of format version 1 or 2, or a credential that opens the keychain already;
    ///   `.missingEntitlement` when this keychain was itself opened with a scoped credential; as
    ///   ``addCredential(_:keyDerivation:)``.
    @discardableResult
    public func addCredential(
        _ credential: Credential, scope: CredentialScope, keyDerivation: PasswordKeyDerivation = .standard
    ) throws(KeychainError) -> KeySlotInfo {
        guard case .groups(let groups) = scope else { return try addCredential(credential, keyDerivation: keyDerivation) }
        return try withWrite { () throws(KeychainError) -> KeySlotInfo in
            guard let added = try rewriteLocked(changing: .addScoped(credential, groups: groups, keyDerivation: keyDerivation)) else {
                throw .invalidParameter("internal error: a key slot was added but not described")
            }
            return added
        }
    }

    /// ``addCredential(_:keyDerivation:)`` with a password's key derived by PBKDF2 at `iterations`.
    ///
    /// - Parameters:
    ///   - credential: The new password or 32-byte key.
    ///   - iterations: The PBKDF2 cost, for a password.
    /// - Returns: The new slot.
    /// - Throws: What ``addCredential(_:keyDerivation:)`` throws.
    @discardableResult
    public func addCredential(_ credential: Credential, iterations: PasswordIterations) throws(KeychainError) -> KeySlotInfo {
        try addCredential(credential, keyDerivation: .pbkdf2(iterations))
    }

    /// Removes the first key slot `credential` opens.
    ///
    /// - Parameter credential: A password or key that opens the keychain now.
    /// - Throws: `KeychainError.wrongCredentials` if it opens no slot; `.invalidParameter` if its slot is the
    ///   last one (a keychain nothing opens is lost); `.io`.
    public func removeCredential(_ credential: Credential) throws(KeychainError) {
        try withWrite { () throws(KeychainError) in
            _ = try rewriteLocked(changing: .remove(openedBy: credential))
        }
    }

    /// Removes the key slot with the given id (see ``keySlots()``), without needing its credential.
    ///
    /// - Parameter id: The slot's 16-byte id.
    /// - Throws: `KeychainError.itemNotFound` if no slot has this id; `.invalidParameter` if it is the last
    ///   slot; `.io`.
    public func removeKeySlot(id: [UInt8]) throws(KeychainError) {
        try withWrite { () throws(KeychainError) in
            _ = try rewriteLocked(changing: .removeID(id))
        }
    }

    /// Changes a credential so that an old copy of the file stays locked: replaces the key slot `old` opens with
    /// one for `new` under a new random master key, re-sealing every item, as ``rotateMasterKey(credentials:keyDerivation:)``
    /// with `[new]` does. Whoever kept a copy of the file from before the change and knows `old` gets the old
    /// master key from it, and that key opens nothing written after the change. Other processes that had the
    /// keychain open with `old` cannot read it any more (`KeychainError.wrongCredentials`); this `Keychain` goes on.
    ///
    /// Formats 1 and 2 can give a new master key only to a credential at hand, so a keychain with other key slots
    /// refuses this change, before any key is derived and without writing: call
    /// ``rotateMasterKey(credentials:keyDerivation:)`` with `new` and every credential to keep, or
    /// ``changeCredentialKeepingKeys(from:to:keyDerivation:)`` to replace the slot alone. (Format version 3, as
    /// designed in Docs/FormatVersion3.md §2.7, gives the other slots the new key by grants.)
    ///
    /// For example:
    /// ```swift
    /// try keychain.changeCredential(from: .password("old horse"), to: .password("new horse battery"))
    /// ```
    ///
    /// - Parameters:
    ///   - old: A password or key that opens the keychain now: its slot must be the only one.
    ///   - new: The password or key that replaces it.
    ///   - keyDerivation: How a new password's key is derived (``PasswordKeyDerivation/standard`` by default).
    /// - Throws: `KeychainError.invalidParameter` if the keychain has other key slots (the message says how many
    ///   and the two ways out), `new` is unusable, or Argon2id is asked of a file kept at format version 1;
    ///   `.wrongCredentials` if `old` opens no slot; `.limitReached` past 20,000,000 PBKDF2 iterations or 2²⁶ KiB
    ///   of Argon2id memory × passes; `.io`.
    public func changeCredential(
        from old: Credential, to new: Credential, keyDerivation: PasswordKeyDerivation = .standard
    ) throws(KeychainError) {
        try withWrite { () throws(KeychainError) in
            // Refused before any key is derived and before the rewrite (which for a version 1 file derives the
            // opening slot's key first): the slot count is in the header this keychain holds.
            let others = log.keySlotInfos().count - 1
            // Version 3 gives the new keys to every other slot by a grant (Docs/FormatVersion3.md §2.7).
            guard others == 0 || log.formatVersion >= 3 else { throw SlotChange.refusal(otherSlots: others) }
            _ = try rewriteLocked(changing: .replaceRotating(openedBy: old, with: new, keyDerivation: keyDerivation))
        }
    }

    /// ``changeCredential(from:to:keyDerivation:)`` with a new password's key derived by PBKDF2 at `iterations`: a
    /// new master key, the old copies locked out.
    ///
    /// - Parameters:
    ///   - old: A password or key that opens the keychain now: its slot must be the only one.
    ///   - new: The password or key that replaces it.
    ///   - iterations: The PBKDF2 cost, for a new password.
    /// - Throws: What ``changeCredential(from:to:keyDerivation:)`` throws.
    public func changeCredential(from old: Credential, to new: Credential, iterations: PasswordIterations) throws(KeychainError) {
        try changeCredential(from: old, to: new, keyDerivation: .pbkdf2(iterations))
    }

    /// Changes a password so that an old copy of the file stays locked: ``changeCredential(from:to:keyDerivation:)``
    /// for two passwords — a new master key, every item re-sealed, refused when other key slots exist.
    ///
    /// For example:
    /// ```swift
    /// try keychain.changePassword(from: "old horse", to: "new horse battery",
    ///                             keyDerivation: try .argon2id(memoryKiB: 262_144, passes: 3, lanes: 4))
    /// ```
    ///
    /// - Parameters:
    ///   - old: The password that opens the keychain now: its slot must be the only one.
    ///   - new: The new password.
    ///   - keyDerivation: How the new password's key is derived (``PasswordKeyDerivation/standard`` by default).
    /// - Throws: What ``changeCredential(from:to:keyDerivation:)`` throws.
    public func changePassword(
        from old: String, to new: String, keyDerivation: PasswordKeyDerivation = .standard
    ) throws(KeychainError) {
        try changeCredential(from: .password(old), to: .password(new), keyDerivation: keyDerivation)
    }

    /// Changes a password, the new one's key derived by PBKDF2 at `iterations`: a new master key, as
    /// ``changePassword(from:to:keyDerivation:)``.
    ///
    /// - Parameters:
    ///   - old: The password that opens the keychain now: its slot must be the only one.
    ///   - new: The new password.
    ///   - iterations: The PBKDF2 cost.
    /// - Throws: What ``changeCredential(from:to:keyDerivation:)`` throws.
    public func changePassword(from old: String, to new: String, iterations: PasswordIterations) throws(KeychainError) {
        try changeCredential(from: .password(old), to: .password(new), keyDerivation: .pbkdf2(iterations))
    }

    /// Replaces the key slot `old` opens with one for `new`, keeping the master key: the cheap change, which
    /// leaves the other key slots as they are and lets other processes that opened the keychain go on.
    ///
    /// It does **not** protect against an old copy of the file: whoever kept a copy from before the change and
    /// knows `old` gets the master key from it, and that key still opens the file and everything written after
    /// the change. Use ``changeCredential(from:to:keyDerivation:)`` (or ``rotateMasterKey(credentials:keyDerivation:)``
    /// when other slots exist) when `old` may have leaked or old copies may be around.
    ///
    /// For example:
    /// ```swift
    /// try keychain.changeCredentialKeepingKeys(from: .password("old horse"), to: .password("new horse battery"))
    /// ```
    ///
    /// - Parameters:
    ///   - old: A password or key that opens the keychain now.
    ///   - new: The password or key that replaces it.
    ///   - keyDerivation: How a new password's key is derived (``PasswordKeyDerivation/standard`` by default).
    /// - Throws: `KeychainError.wrongCredentials` if `old` opens no slot; `.invalidParameter` if `new` is
    ///   unusable or Argon2id is asked of a file kept at format version 1; `.limitReached` past 20,000,000 PBKDF2
    ///   iterations or 2²⁶ KiB of Argon2id memory × passes in all; `.io`.
    public func changeCredentialKeepingKeys(
        from old: Credential, to new: Credential, keyDerivation: PasswordKeyDerivation = .standard
    ) throws(KeychainError) {
        try withWrite { () throws(KeychainError) in
            _ = try rewriteLocked(changing: .replace(openedBy: old, with: new, keyDerivation: keyDerivation))
        }
    }

    /// Changes a password's key slot alone, keeping the master key: ``changeCredentialKeepingKeys(from:to:keyDerivation:)``
    /// for two passwords. It does **not** protect against an old copy of the file: that copy and `old` still give
    /// the master key, which opens everything written after the change.
    ///
    /// For example:
    /// ```swift
    /// try keychain.changePasswordKeepingKeys(from: "old horse", to: "new horse battery")
    /// ```
    ///
    /// - Parameters:
    ///   - old: The password that opens the keychain now.
    ///   - new: The new password.
    ///   - keyDerivation: How the new password's key is derived (``PasswordKeyDerivation/standard`` by default).
    /// - Throws: What ``changeCredentialKeepingKeys(from:to:keyDerivation:)`` throws.
    public func changePasswordKeepingKeys(
        from old: String, to new: String, keyDerivation: PasswordKeyDerivation = .standard
    ) throws(KeychainError) {
        try changeCredentialKeepingKeys(from: .password(old), to: .password(new), keyDerivation: keyDerivation)
    }

    /// Replaces the master key with a new random one, re-sealing every item, and replaces every key slot with
    /// one for each of `credentials`: after it, exactly those credentials open the keychain. Use it when a
    /// credential or the master key may have leaked. Other processes that had the keychain open can go on
    /// only if the credential they opened it with is among `credentials`.
    ///
    /// - Parameters:
    ///   - credentials: The passwords and keys that will open the keychain (1 … 16).
    ///   - keyDerivation: How the password slots derive their key (``PasswordKeyDerivation/standard`` by default).
    /// - Throws: `KeychainError.invalidParameter` for no credentials, an unusable one, or Argon2id asked of a
    ///   file kept at format version 1; `.limitReached` past 16 slots, 20,000,000 PBKDF2 iterations or 2²⁶ KiB
    ///   of Argon2id memory × passes in all; `.io`.
    public func rotateMasterKey(
        credentials: [Credential], keyDerivation: PasswordKeyDerivation = .standard
    ) throws(KeychainError) {
        try withWrite { () throws(KeychainError) in
            _ = try rewriteLocked(changing: .rotate(credentials, keyDerivation: keyDerivation))
        }
    }

    /// ``rotateMasterKey(credentials:keyDerivation:)`` with the password slots' keys derived by PBKDF2 at
    /// `iterations`.
    ///
    /// - Throws: What ``rotateMasterKey(credentials:keyDerivation:)`` throws.
    public func rotateMasterKey(credentials: [Credential], iterations: PasswordIterations) throws(KeychainError) {
        try rotateMasterKey(credentials: credentials, keyDerivation: .pbkdf2(iterations))
    }
}
