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
    // Fields ordered widest first so that the value packs into 48 bytes (a keychain keeps one per item).
    /// nonce ‖ ciphertext ‖ tag.
    let box: [UInt8]
    let sequence: UInt64
    /// The tag of the item's attributes box, which precedes the secret box in the chain: 16 bytes (or none,
    /// for a placeholder), kept inline as two big-endian words so that an item in memory holds one array
    /// fewer.
    private let chainHigh: UInt64
    private let chainLow: UInt64
    let entryCount: UInt32
    let entryIndex: UInt32
    /// See ``entryByteCount``; an entry is at most a few MiB (SPEC.md §11), far below 2³².
    private let storedEntryByteCount: UInt32
    let kind: RecordKind
    private let hasChain: Bool

    /// The bytes of the file the put that wrote this secret occupies: its two box fields, plus the entry kind
    /// byte in a transaction or the 17-byte frame header of a put record. Counted as live bytes while the
    /// item is live (``KeychainStatistics``).
    var entryByteCount: Int { Int(storedEntryByteCount) }

    init(
        box: [UInt8], sequence: UInt64, kind: RecordKind, entryCount: UInt32, entryIndex: UInt32, previousChain: [UInt8],
        entryByteCount: Int = 0
    ) {
        precondition(previousChain.isEmpty || previousChain.count == 16, "a chain value is a 16-byte tag")
        self.box = box
        self.sequence = sequence
        self.kind = kind
        self.entryCount = entryCount
        self.entryIndex = entryIndex
        hasChain = !previousChain.isEmpty
        chainHigh = previousChain.count == 16 ? previousChain.withUnsafeBytes { $0.loadBigEndianWord(at: 0) } : 0
        chainLow = previousChain.count == 16 ? previousChain.withUnsafeBytes { $0.loadBigEndianWord(at: 8) } : 0
        storedEntryByteCount = UInt32(clamping: entryByteCount)
    }

    /// The tag of the item's attributes box, which precedes the secret box in the chain.
    var previousChain: [UInt8] {
        guard hasChain else { return [] }
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: chainHigh >> (56 - 8 * index))
            bytes[8 + index] = UInt8(truncatingIfNeeded: chainLow >> (56 - 8 * index))
        }
        return bytes
    }

    /// The secret's size in bytes.
    var plaintextCount: Int { box.count - Format.boxOverhead }
}

extension UnsafeRawBufferPointer {
    /// The big-endian 64-bit word at `offset` (which the caller keeps within the buffer).
    fileprivate func loadBigEndianWord(at offset: Int) -> UInt64 {
        UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}
