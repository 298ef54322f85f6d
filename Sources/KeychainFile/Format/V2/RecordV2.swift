/// The frame and limits of a format version 2 record (Docs/FormatVersion2.md §5):
///
/// ```
/// u32 body length L ‖ u32 L xor 0xFFFFFFFF ‖ u8 kind ‖ u64 sequence
///     ‖ u32 part ‖ u32 entry count ‖ u32 box count N ‖ N × (u8 key id ‖ u8 role ‖ u32 box length B ‖ box)
/// ```
///
/// Kind 1 commits: it is a whole transaction, or the last part of one whose earlier parts (`part` 0, 1, …) are
/// the kind 3 records just before it. Boxes come page by page: the secret boxes of a page's puts, in order,
/// then the page (role 1), whose entries name each secret's length and tag. A page's plaintext is
/// `u8 version (1) ‖ u16 entry count ‖ entries`; an entry is `u8 kind ‖` for a put (1) `u32 A ‖ A bytes of
/// attributes (SPEC.md §7.3's attributes plaintext, item id included) ‖ u32 secret length ‖ secret tag (16)`,
/// for a deletion (2) or a tombstone (3) `item id (16) ‖ i64 time in ms`.
enum RecordV2 {
    static let frameHeaderSize = 17
    /// Frame header and the part, entry count and box count.
    static let fixedSize = frameHeaderSize + 12
    static let boxFieldHeaderSize = 6
    static let minimumBodyLength = fixedSize - 8 + boxFieldHeaderSize + 28
    /// The largest body: records stay small enough to open in bounded memory; larger transactions take parts.
    static let maximumBodyLength = 16 << 20
    static let maximumSecretSize = 1 << 20
    /// A writer closes a page before it would pass this many bytes of plaintext (a single entry may pass it).
    static let pagePlaintextLimit = 8_192
    static let pageEncodingVersion: UInt8 = 1

    enum Kind: UInt8 {
        case commit = 1
        case part = 3
    }

    enum Role: UInt8 {
        case page = 1
        case secret = 2
    }
}
