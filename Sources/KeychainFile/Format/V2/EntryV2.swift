/// One operation in a format version 2 record (Docs/FormatVersion2.md §5): an item put with its secret, a
/// deletion, or a tombstone — a deletion a rewrite keeps, so that copies of a keychain can be merged.
enum EntryV2: Sendable, Equatable {
    case put(id: ItemID, attributes: ItemAttributes, secret: [UInt8])
    /// A put whose secret box — nonce ‖ ciphertext ‖ tag, sealed earlier for this item under this file's secret
    /// key, and verified — is written as it is: what a rewrite that keeps the master key does (SPEC §26.6), so
    /// that it spends no nonces and never holds the secret in plaintext.
    case copy(id: ItemID, attributes: ItemAttributes, secretBox: [UInt8])
    /// `time`: milliseconds since 1970-01-01T00:00:00Z.
    case delete(id: ItemID, time: Int64)
    case tombstone(id: ItemID, time: Int64)

    /// The entry kind byte in a page.
    var kind: UInt8 {
        switch self {
        case .put, .copy: return 1
        case .delete: return 2
        case .tombstone: return 3
        }
    }

    /// Bytes of the entry in its page's plaintext.
    var pageByteCount: Int {
        switch self {
        case .put(_, let attributes, _), .copy(_, let attributes, _):
            return 1 + 4 + AttributeCoding.encodedByteCount(attributes) + 4 + RecordV2.secretBoxDigestSize
        case .delete, .tombstone: return Self.deletionByteCount
        }
    }

    /// Bytes of a deletion or tombstone in its page's plaintext: kind, item id, time.
    static let deletionByteCount = 1 + ItemID.byteCount + 8
}
