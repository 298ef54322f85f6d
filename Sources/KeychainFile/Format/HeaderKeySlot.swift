import KeychainCrypto

/// A key slot of a version 2 header: a committed slot, or a version 1 slot kept as it was (a **legacy** slot)
/// when a version 1 file was upgraded without its credential (Docs/FormatVersion2.md §4).
///
/// A legacy slot is `3 ‖ 0 ‖ length u16 (4 + its version 1 length) ‖` the version 1 slot's bytes, opened as
/// version 1 opens it (its associated data, its PBKDF2 and the standard library's NFC), and replaced by a
/// committed slot the next time its credential opens the file and a rewrite follows.
enum HeaderKeySlot: Sendable, Equatable {
    case committed(CommittedKeySlot)
    case legacy(KeySlot)

    static let legacyType: UInt8 = 3

    /// Bytes in the encoded slot.
    var length: Int {
        switch self {
        case .committed: return CommittedKeySlot.length
        case .legacy(let slot): return 4 + slot.length
        }
    }

    var slotID: [UInt8] {
        switch self {
        case .committed(let slot): return slot.slotID
        case .legacy(let slot): return slot.slotID
        }
    }

    /// What one derivation for this slot costs.
    var work: (iterations: UInt64, argon2KiB: UInt64) {
        switch self {
        case .committed(let slot): return slot.kdf.work
        case .legacy(let slot): return (UInt64(slot.iterations), 0)
        }
    }

    /// The memory one Argon2id derivation for this slot takes, in KiB; 0 for the other KDFs.
    var argon2MemoryKiB: UInt64 {
        guard case .committed(let slot) = self else { return 0 }
        return slot.kdf.argon2MemoryKiB
    }

    /// Whether opening this slot with `credential` runs its KDF: only a credential of the slot's own kind does.
    func derivesKey(for credential: Credential) -> Bool {
        switch self {
        case .committed(let slot): return slot.type == credential.slotType
        case .legacy(let slot): return slot.type == credential.slotType
        }
    }

    func encode(into writer: inout ByteWriter) {
        switch self {
        case .committed(let slot):
            slot.encode(into: &writer)
        case .legacy(let slot):
            writer.writeUInt8(Self.legacyType)
            writer.writeUInt8(0)
            writer.writeUInt16(UInt16(length))
            slot.encode(into: &writer)
        }
    }

    /// Reads one slot; `fileOffset` places `reader`'s bytes in the file.
    static func parse(_ reader: inout ByteReader, fileOffset: Int) throws(KeychainError) -> HeaderKeySlot {
        let start = reader.offset
        var peek = reader
        let type: UInt8
        do {
            type = try peek.readUInt8("slot type")
        } catch {
            throw .corrupted(offset: fileOffset + start, reason: "key slot: truncated slot type")
        }
        guard type == legacyType else { return .committed(try CommittedKeySlot.parse(&reader, fileOffset: fileOffset)) }
        do {
            _ = try reader.readUInt8("slot type")
            guard try reader.readUInt8("reserved") == 0 else {
                throw KeychainError.corrupted(offset: fileOffset + start + 1, reason: "legacy key slot: reserved byte is not zero")
            }
            let declared = Int(try reader.readUInt16("slot length"))
            let slot = try KeySlot.parse(&reader, fileOffset: fileOffset)
            guard declared == 4 + slot.length else {
                throw KeychainError.corrupted(offset: fileOffset + start + 2, reason: "legacy key slot: length \(declared), expected \(4 + slot.length)")
            }
            return .legacy(slot)
        } catch let error as KeychainError {
            throw error
        } catch let underflow as ByteReader.Underflow {
            throw KeychainError.corrupted(offset: fileOffset + underflow.offset, reason: "legacy key slot: truncated \(underflow.field)")
        } catch {
            throw KeychainError.corrupted(offset: fileOffset + start, reason: "legacy key slot: \(error)")
        }
    }

    /// Opens the slot with `credential`: the master key, or `nil` when the credential is not this slot's.
    ///
    /// - Throws: `.corrupted` when a committed slot's commitment matches and its wrap does not authenticate.
    func open(with credential: Credential, fileID: [UInt8], slotOffset: Int) throws(KeychainError) -> SymmetricKey? {
        switch self {
        case .committed(let slot):
            return try slot.open(with: credential, fileID: fileID, slotOffset: slotOffset)
        case .legacy(let slot):
            guard slot.type == credential.slotType else { return nil }
            return try slot.unwrap(with: credential, fileID: fileID)
        }
    }
}
