@_spi(KeychainFileInternals) import KeychainCrypto

/// A version 2 key slot (Docs/FormatVersion2.md §4): the master key wrapped under a key-encryption key (KEK)
/// derived from one credential by the slot's KDF, with a **commitment** to that KEK, so that the slot opens
/// under one KEK only (no partitioning oracle) and a reader can tell a wrong credential from a damaged slot.
///
/// Layout, 156 bytes, big-endian: type (1: password, 2: raw key) ‖ KDF id ‖ length u16 (156) ‖ slot id (16) ‖
/// KDF parameters (12) ‖ salt (32) ‖ commitment (32) ‖ nonce (12) ‖ wrapped key (32) ‖ tag (16). The wrap's
/// associated data is `"KCF2 key slot" ‖ file id ‖` the first 96 bytes (everything before the nonce).
///
/// The KEK is exactly 32 bytes (every KDF id derives 32). It keys nothing itself: the commitment and the wrap key
/// are two HKDF-SHA256 outputs of it (empty salt), under the infos `"KCF2 slot commitment" ‖ file id ‖ slot id`
/// and `"KCF2 slot wrap" ‖ file id ‖ slot id`, so that one key never serves two primitives.
struct CommittedKeySlot: Sendable, Equatable {
    let type: KeySlot.SlotType
    let kdf: SlotKDF
    let slotID: [UInt8]
    let salt: [UInt8]
    let commitment: [UInt8]
    let nonce: [UInt8]
    let wrappedKey: [UInt8]
    let tag: [UInt8]

    static let length = 156
    static let parametersEnd = 96

    /// The slot's first 96 bytes: everything the wrap authenticates besides the file id.
    var parameterBytes: [UInt8] {
        var writer = ByteWriter(capacity: Self.parametersEnd)
        writer.writeUInt8(type.rawValue)
        writer.writeUInt8(kdf.id)
        writer.writeUInt16(UInt16(Self.length))
        writer.writeBytes(slotID)
        writer.writeBytes(kdf.parameterBytes)
        writer.writeBytes(salt)
        writer.writeBytes(commitment)
        return writer.bytes
    }

    func encode(into writer: inout ByteWriter) {
        writer.writeBytes(parameterBytes)
        writer.writeBytes(nonce)
        writer.writeBytes(wrappedKey)
        writer.writeBytes(tag)
    }

    /// Reads one slot whose type byte (1 or 2) the caller has seen; `fileOffset` places `reader` in the file.
    static func parse(_ reader: inout ByteReader, fileOffset: Int) throws(KeychainError) -> CommittedKeySlot {
        let start = reader.offset
        func corrupted(_ reason: String) -> KeychainError { .corrupted(offset: fileOffset + start, reason: "key slot: \(reason)") }
        do {
            let rawType = try reader.readUInt8("slot type")
            guard let type = KeySlot.SlotType(rawValue: rawType) else { throw corrupted("unknown slot type \(rawType)") }
            let kdfID = try reader.readUInt8("KDF id")
            let declaredLength = Int(try reader.readUInt16("slot length"))
            guard declaredLength == length else { throw corrupted("length \(declaredLength), expected \(length)") }
            let slotID = try reader.readBytes(16, "slot id")
            let parameters = try reader.readBytes(SlotKDF.parametersLength, "KDF parameters")
            let kdf: SlotKDF
            do {
                kdf = try SlotKDF.parse(id: kdfID, parameters: parameters[...])
            } catch {
                throw corrupted(error.reason)
            }
            switch (type, kdf) {
            case (.password, .pbkdf2), (.password, .argon2id), (.rawKey, .hkdf): break
            default: throw corrupted("KDF id \(kdfID) does not fit slot type \(rawType)")
            }
            return CommittedKeySlot(
                type: type, kdf: kdf, slotID: slotID, salt: try reader.readBytes(32, "salt"),
                commitment: try reader.readBytes(32, "commitment"), nonce: try reader.readBytes(12, "nonce"),
                wrappedKey: try reader.readBytes(32, "wrapped key"), tag: try reader.readBytes(16, "tag"))
        } catch let error as KeychainError {
            throw error
        } catch let underflow as ByteReader.Underflow {
            throw KeychainError.corrupted(offset: fileOffset + underflow.offset, reason: "key slot: truncated \(underflow.field)")
        } catch {
            throw corrupted("\(error)")
        }
    }

    /// The KEK for `credential`, or `nil` when the credential is of the other kind (a password for a raw-key
    /// slot).
    func keyEncryptionKey(for credential: Credential, fileID: [UInt8]) throws(KeychainError) -> SymmetricKey? {
        switch (type, credential) {
        case (.password, .password(let password)):
            // The copies of the credential made here are wiped when the KEK is derived.
            var secret = UnicodeNFC.utf8(of: password)
            defer { secret.withUnsafeMutableBytes { secureWipe($0) } }
            return try kdf.deriveKey(from: secret, salt: salt, info: [])
        case (.rawKey, .key(let key)):
            var secret = key.withUnsafeBytes { Array($0) }
            defer { secret.withUnsafeMutableBytes { secureWipe($0) } }
            return try kdf.deriveKey(from: secret, salt: salt, info: Self.rawKeyInfo + fileID)
        default:
            return nil
        }
    }

    /// HKDF-SHA256(KEK, empty salt, "KCF2 slot commitment" ‖ file id ‖ slot id), 32 bytes: committing to the
    /// KEK (finding two KEKs with one commitment means a SHA-256 collision), and public.
    static func commitment(kek: SymmetricKey, fileID: [UInt8], slotID: [UInt8]) throws(KeychainError) -> [UInt8] {
        try derive(from: kek, label: commitmentLabel, fileID: fileID, slotID: slotID).withUnsafeBytes { Array($0) }
    }

    /// HKDF-SHA256(KEK, empty salt, "KCF2 slot wrap" ‖ file id ‖ slot id), 32 bytes: the AES-256-GCM key of the
    /// wrap.
    static func wrapKey(kek: SymmetricKey, fileID: [UInt8], slotID: [UInt8]) throws(KeychainError) -> SymmetricKey {
        try derive(from: kek, label: wrapLabel, fileID: fileID, slotID: slotID)
    }

    private static func derive(from kek: SymmetricKey, label: [UInt8], fileID: [UInt8], slotID: [UInt8]) throws(KeychainError) -> SymmetricKey {
        guard kek.bitCount == 256 else { throw .invalidParameter("a key-encryption key is 32 bytes, not \(kek.bitCount / 8)") }
        do {
            return try HKDF<SHA256>.deriveKey(inputKeyMaterial: kek, salt: [UInt8](), info: label + fileID + slotID, outputByteCount: 32)
        } catch {
            throw .invalidParameter("HKDF: \(error)")
        }
    }

    /// Opens the slot with `credential`.
    ///
    /// - Returns: the master key; `nil` when the credential is not this slot's (its KEK does not match the
    ///   commitment, compared in constant time, or it is of the other kind).
    /// - Throws: `.corrupted` when the commitment matches but the wrap does not authenticate: the slot was
    ///   damaged or altered after it was made for this very credential.
    func open(with credential: Credential, fileID: [UInt8], slotOffset: Int) throws(KeychainError) -> SymmetricKey? {
        guard let kek = try keyEncryptionKey(for: credential, fileID: fileID) else { return nil }
        // Compared in constant time (SymmetricKey's ==).
        let expected = try Self.commitment(kek: kek, fileID: fileID, slotID: slotID)
        guard SymmetricKey(data: expected) == SymmetricKey(data: commitment) else { return nil }
        let wrapKey = try Self.wrapKey(kek: kek, fileID: fileID, slotID: slotID)
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: wrappedKey, tag: tag)
            var master = try AES.GCM.open(box, using: wrapKey, authenticating: Self.aadPrefix + fileID + parameterBytes)
            defer { master.withUnsafeMutableBytes { secureWipe($0) } }
            return SymmetricKey(data: master)
        } catch {
            throw .corrupted(offset: slotOffset, reason: "key slot: the credential matches the slot's commitment but its wrapped key does not authenticate")
        }
    }

    /// Wraps `masterKey` in a new slot for `credential`, derived with `kdf` (which must fit the credential).
    static func make<Generator: RandomNumberGenerator>(
        for credential: Credential, kdf: SlotKDF, masterKey: SymmetricKey, fileID: [UInt8], using generator: inout Generator
    ) throws(KeychainError) -> CommittedKeySlot {
        let slotID = randomBytes(16, using: &generator)
        let salt = randomBytes(32, using: &generator)
        let nonce = randomBytes(12, using: &generator)
        return try make(for: credential, kdf: kdf, masterKey: masterKey, fileID: fileID, slotID: slotID, salt: salt, nonce: nonce)
    }

    /// Wraps `masterKey` with given slot id, salt and nonce (fixtures and tests use fixed ones).
    static func make(
        for credential: Credential, kdf: SlotKDF, masterKey: SymmetricKey, fileID: [UInt8], slotID: [UInt8],
        salt: [UInt8], nonce: [UInt8]
    ) throws(KeychainError) -> CommittedKeySlot {
        let type = credential.slotType
        switch (type, kdf) {
        case (.password, .pbkdf2), (.password, .argon2id), (.rawKey, .hkdf): break
        default: throw .invalidParameter("KDF id \(kdf.id) cannot derive a key from this kind of credential")
        }
        if case .password(let password) = credential, let scalar = UnicodeAssignedScalars.firstUnassigned(in: password) {
            throw .invalidParameter(
                "the password holds U+\(String(scalar.value, radix: 16, uppercase: true)), which Unicode 15.0 does not assign; its normal form could change in a later version, so it cannot protect a key slot")
        }
        let draft = CommittedKeySlot(type: type, kdf: kdf, slotID: slotID, salt: salt, commitment: [], nonce: nonce, wrappedKey: [], tag: [])
        guard let kek = try draft.keyEncryptionKey(for: credential, fileID: fileID) else {
            throw .invalidParameter("credential does not fit this slot type")
        }
        let unsealed = CommittedKeySlot(
            type: type, kdf: kdf, slotID: slotID, salt: salt,
            commitment: try commitment(kek: kek, fileID: fileID, slotID: slotID), nonce: nonce, wrappedKey: [], tag: [])
        let wrapKey = try wrapKey(kek: kek, fileID: fileID, slotID: slotID)
        do {
            var plaintext = masterKey.withUnsafeBytes { Array($0) }
            defer { plaintext.withUnsafeMutableBytes { secureWipe($0) } }
            let box = try AES.GCM.seal(
                plaintext, using: wrapKey, nonce: AES.GCM.Nonce(data: nonce), authenticating: aadPrefix + fileID + unsealed.parameterBytes)
            return CommittedKeySlot(
                type: type, kdf: kdf, slotID: slotID, salt: salt, commitment: unsealed.commitment, nonce: nonce,
                wrappedKey: box.ciphertext, tag: box.tag)
        } catch {
            throw .invalidParameter("key slot wrap: \(error)")
        }
    }

    static let aadPrefix = Array("KCF2 key slot".utf8)
    static let rawKeyInfo = Array("KCF2 raw-key slot".utf8)
    static let commitmentLabel = Array("KCF2 slot commitment".utf8)
    static let wrapLabel = Array("KCF2 slot wrap".utf8)
}
