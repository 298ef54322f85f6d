/// A version 3 key slot (Docs/FormatVersion3.md §2.2): a credential's way into the keychain that another holder
/// can hand new keys to without the credential, so that keys can be rotated while every credential keeps working.
///
/// Layout, big-endian:
///
/// | offset | size | field |
/// | --- | --- | --- |
/// | 0 | 1 | type: 1 password, 2 raw key |
/// | 1 | 1 | KDF id (1 PBKDF2, 3 Argon2id for a password; 2 HKDF for a raw key) |
/// | 2 | 2 | the slot's whole length, 192 … 8,192 |
/// | 4 | 16 | slot id |
/// | 20 | 12 | KDF parameters (as version 2's) |
/// | 32 | 32 | salt |
/// | 64 | 32 | commitment: HKDF(KEK, "KCF3 slot commitment" ‖ file id ‖ slot id) |
/// | 96 | 32 | public key `P = X25519(x, 9)`, `x` random, kept in the anchor |
/// | 128 | 1 + n | scope: n (0 for full) and n key ids (``SlotScopeV3``) |
/// | 129 + n | 32 | attestation: HMAC-SHA256(HKDF(R, "KCF3 slot attestation" ‖ file id), slot id ‖ `P` ‖ scope) |
/// | 161 + n | … | anchor (``SlotBoxV3``), grant count u8 (0 … 32), grants (``SlotGrantV3``) |
///
/// The **identity** is every field before the attestation except the length (which grants change); the **public
/// identity** is slot id ‖ `P` ‖ scope, which a change of the slot's credential keeps, so that the attestation and
/// the grants outlive a password change. The anchor is sealed under HKDF(KEK, "KCF3 slot anchor" ‖ file id ‖ slot
/// id) with associated data "KCF3 slot anchor" ‖ file id ‖ identity, and holds `x` (32) ‖ a ``KeySetV3``; grant `g`
/// (1-based) seals a ``KeySetV3`` with the key ``SlotKeysV3/grantKey(ephemeralSecret:rootSecret:ephemeralPublicKey:slotPublicKey:fileID:slotID:number:)``
/// and associated data "KCF3 slot grant" ‖ file id ‖ public identity ‖ u8 g ‖ `E`.
struct KeySlotV3: Sendable, Equatable {
    let type: KeySlot.SlotType
    let kdf: SlotKDF
    let slotID: [UInt8]
    let salt: [UInt8]
    let commitment: [UInt8]
    let publicKey: [UInt8]
    let scope: SlotScopeV3
    let attestation: [UInt8]
    let anchor: SlotBoxV3
    let grants: [SlotGrantV3]

    /// No slot is shorter (an empty anchor, no grant) or longer.
    static let minimumLength = 192
    static let maximumLength = 8_192
    static let maximumGrants = 32

    /// The fields the anchor, the grants and the attestation authenticate.
    var identity: [UInt8] {
        var writer = ByteWriter(capacity: 160 + scope.bytes.count)
        writer.writeUInt8(type.rawValue)
        writer.writeUInt8(kdf.id)
        writer.writeBytes(slotID)
        writer.writeBytes(kdf.parameterBytes)
        writer.writeBytes(salt)
        writer.writeBytes(commitment)
        writer.writeBytes(publicKey)
        writer.writeBytes(scope.bytes)
        return writer.bytes
    }

    /// What the attestation and the grants authenticate: slot id ‖ `P` ‖ scope.
    var publicIdentity: [UInt8] { slotID + publicKey + scope.bytes }

    /// The slot's length in the header.
    var byteCount: Int { 4 + identity.count - 2 + 32 + anchor.byteCount + 1 + grants.reduce(0) { $0 + $1.byteCount } }

    func encode(into writer: inout ByteWriter) {
        writer.writeUInt8(type.rawValue)
        writer.writeUInt8(kdf.id)
        writer.writeUInt16(UInt16(byteCount))
        writer.writeBytes(identity.dropFirst(2))
        writer.writeBytes(attestation)
        anchor.encode(into: &writer)
        writer.writeUInt8(UInt8(grants.count))
        for grant in grants { grant.encode(into: &writer) }
    }

    var encoded: [UInt8] {
        var writer = ByteWriter(capacity: byteCount)
        encode(into: &writer)
        return writer.bytes
    }

    /// Reads the slot at `bytes[start...]`, checking every length against its bounds before use; `fileOffset` is
    /// where `bytes[0]` is in the file, for error messages.
    static func parse(_ bytes: [UInt8], at start: Int = 0, fileOffset: Int) throws(KeychainError) -> KeySlotV3 {
        func corrupted(_ at: Int, _ reason: String) -> KeychainError {
            .corrupted(offset: fileOffset + at, reason: "key slot: \(reason)")
        }
        guard start < bytes.count else { throw corrupted(0, "the key slot at byte \(start) is past the end of the header") }
        var reader = ByteReader(bytes, range: start..<bytes.count)
        do {
            let rawType = try reader.readUInt8("slot type")
            guard let type = KeySlot.SlotType(rawValue: rawType) else { throw corrupted(start, "unknown slot type \(rawType)") }
            let kdfID = try reader.readUInt8("KDF id")
            let length = Int(try reader.readUInt16("slot length"))
            guard length >= minimumLength, length <= maximumLength, length <= bytes.count - start else {
                throw corrupted(start + 2, "length \(length) is outside \(minimumLength) … \(min(maximumLength, bytes.count - start))")
            }
            reader = ByteReader(bytes, range: (start + 4)..<(start + length))
            let slotID = try reader.readBytes(16, "slot id")
            let kdf: SlotKDF
            do {
                kdf = try SlotKDF.parse(id: kdfID, parameters: bytes[try reader.readRange(SlotKDF.parametersLength, "KDF parameters")])
            } catch let error as SlotKDFError {
                throw corrupted(start + 1, error.reason)
            }
            switch (type, kdf) {
            case (.password, .pbkdf2), (.password, .argon2id), (.rawKey, .hkdf): break
            default: throw corrupted(start + 1, "KDF id \(kdfID) does not fit slot type \(rawType)")
            }
            let salt = try reader.readBytes(32, "salt")
            let commitment = try reader.readBytes(32, "commitment")
            let publicKey = try reader.readBytes(32, "public key")
            let scopeOffset = reader.offset
            let count = Int(try reader.readUInt8("scope"))
            let scope: SlotScopeV3
            if count == 0 {
                scope = .full
            } else {
                let keyIDs = try reader.readBytes(count, "scope's key ids")
                guard SlotScopeV3.isValid(keyIDs) else { throw corrupted(scopeOffset, "the scope's key ids are not 1 … 255 in increasing order") }
                scope = .groups(keyIDs)
            }
            let attestation = try reader.readBytes(32, "attestation")
            let anchor = try SlotBoxV3.parse(&reader, "anchor")
            let grantsOffset = reader.offset
            let grantCount = Int(try reader.readUInt8("grant count"))
            guard grantCount <= maximumGrants else { throw corrupted(grantsOffset, "\(grantCount) grants, more than \(maximumGrants)") }
            var grants: [SlotGrantV3] = []
            for number in 1...max(1, grantCount) where number <= grantCount {
                grants.append(try SlotGrantV3.parse(&reader, number: number))
            }
            guard reader.isAtEnd else { throw corrupted(reader.offset, "\(reader.remaining) bytes follow the last grant inside the slot's length") }
            return KeySlotV3(
                type: type, kdf: kdf, slotID: slotID, salt: salt, commitment: commitment, publicKey: publicKey, scope: scope,
                attestation: attestation, anchor: anchor, grants: grants)
        } catch let error as KeychainError {
            throw error
        } catch let underflow as ByteReader.Underflow {
            throw corrupted(underflow.offset, "truncated \(underflow.field)")
        } catch {
            throw corrupted(start, "\(error)")
        }
    }
}
