@_spi(KeychainFileInternals) import KeychainCrypto

/// The file-wide context every record box is bound to.
struct RecordContext: Sendable {
    let fileID: [UInt8]
    let epoch: UInt64
    let recordKey: SymmetricKey
    /// `recordKey` prepared once for the boxes (see ``AES/GCM/PreparedKey``).
    let boxKey: AES.GCM.PreparedKey
    /// What the bytes that vary between the attributes boxes of one record — the entry index and the previous chain
    /// value, both public — add to GHASH (see ``boxKey(forRecord:kind:entryCount:)``).
    let attributesBoxFields: AES.GCM.PublicFieldTables

    init(fileID: [UInt8], epoch: UInt64, recordKey: SymmetricKey) {
        self.fileID = fileID
        self.epoch = epoch
        self.recordKey = recordKey
        // A record key is the 32 bytes HKDF derives (SPEC.md §6), never a length read from a file; the ranges are
        // BoxAAD's own.
        guard let boxKey = try? AES.GCM.PreparedKey(recordKey),
            let fields = try? AES.GCM.PublicFieldTables(
                key: boxKey, associatedDataByteCount: BoxAAD.size, varying: [BoxAAD.entryIndexRange, BoxAAD.previousChainRange])
        else { preconditionFailure("a record key is not an AES key") }
        self.boxKey = boxKey
        attributesBoxFields = fields
    }

    /// The bytes of associated data that every box of one record begins with: magic, file id, epoch and the
    /// sequence number's first half (SPEC.md §7.2), two GHASH blocks.
    static let sharedAADPrefixSize = 32

    /// The fewest entries a record has for its attributes boxes to start GHASH after their whole associated data
    /// (below): preparing that costs about what it saves on one box.
    static let attributesTemplateMinimumEntries: UInt32 = 8

    /// ``boxKey`` holding the GHASH state after the first ``sharedAADPrefixSize`` bytes of associated data of
    /// the boxes of one record: each box's GHASH starts there and absorbs two blocks fewer (of six or more: five
    /// of associated data, the ciphertext's and the lengths). In a record of at least
    /// ``attributesTemplateMinimumEntries`` entries, an attributes box starts after all five: its associated data
    /// differs from the record's other attributes boxes' only in the entry index and the previous chain value,
    /// which are public (in the file in the clear), and ``attributesBoxFields`` holds what they add. Tags are the
    /// same as with ``boxKey``.
    func boxKey(forRecord sequence: UInt64, kind: RecordKind, entryCount: UInt32) -> AES.GCM.PreparedKey {
        withUnsafeTemporaryAllocation(byteCount: BoxAAD.size, alignment: 8) { aad in
            BoxAAD.writeWithZeroChain(
                fileID: fileID, epoch: epoch, sequence: sequence, kind: kind, entryCount: entryCount, entryIndex: 0,
                role: .attributes, itemID: nil, into: aad)
            let prefix = UnsafeRawBufferPointer(rebasing: aad[..<Self.sharedAADPrefixSize])
            guard entryCount >= Self.attributesTemplateMinimumEntries else { return boxKey.sharingAssociatedDataPrefix(prefix) }
            return boxKey.sharingAssociatedData(prefix: prefix, template: UnsafeRawBufferPointer(aad), publicFields: attributesBoxFields)
        }
    }
}
