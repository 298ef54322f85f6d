/// The 78-byte associated data of a record box (SPEC.md §7.2).
struct BoxAAD {
    static let size = 78

    /// Builds the AAD.
    static func make(
        fileID: [UInt8], epoch: UInt64, sequence: UInt64, kind: RecordKind, entryCount: UInt32, entryIndex: UInt32,
        role: BoxRole, itemID: ItemID?, previousChain: [UInt8]
    ) -> [UInt8] {
        var writer = ByteWriter(capacity: size)
        writer.writeBytes(Format.aadPrefix)
        writer.writeBytes(fileID)
        writer.writeUInt64(epoch)
        writer.writeUInt64(sequence)
        writer.writeUInt8(kind.rawValue)
        writer.writeUInt32(entryCount)
        writer.writeUInt32(entryIndex)
        writer.writeUInt8(role.rawValue)
        if let itemID { writer.writeBytes(itemID.bytes) } else { writer.writeBytes([UInt8](repeating: 0, count: 16)) }
        writer.writeBytes(previousChain)
        return writer.bytes
    }
}

/// Where an item's sealed secret is and the associated data it was sealed with, so that it can be
/// verified and decrypted on demand (SPEC.md §7.2–7.3).
struct SealedSecret: Sendable, Equatable {
    /// nonce ‖ ciphertext ‖ tag.
    let box: [UInt8]
    let sequence: UInt64
    let kind: RecordKind
    let entryCount: UInt32
    let entryIndex: UInt32
    /// The tag of the item's attributes box, which precedes the secret box in the chain.
    let previousChain: [UInt8]
    /// The bytes of the file the put that wrote this secret occupies: its two box fields, plus the entry kind
    /// byte in a transaction or the 17-byte frame header of a put record. Counted as live bytes while the
    /// item is live (``KeychainStatistics``).
    var entryByteCount: Int = 0

    /// The secret's size in bytes.
    var plaintextCount: Int { box.count - Format.boxOverhead }
}
