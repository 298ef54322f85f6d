@_spi(KeychainFileInternals) import KeychainCrypto

/// The frame and limits of a format version 2 record (Docs/FormatVersion2.md §5):
///
/// ```
/// u32 body length L ‖ u32 L xor 0xFFFFFFFF ‖ u8 kind ‖ u64 sequence ‖ u32 part ‖ u32 entry count
///     ‖ u32 box count N ‖ u32 frame check ‖ N × (u8 key id ‖ u8 role ‖ u32 box length B ‖ box)
/// ```
///
/// The **frame check** is the first 4 bytes of SHA-256 over the 29 bytes before it and every box field's
/// 6-byte header (key id, role, length), in order: an unkeyed check, as `L xor 0xFFFFFFFF` is for the length, so
/// that damage to a kind, sequence, part, count, key id or role byte is found by the scan, at its own record,
/// before anything is trusted or authenticated.
///
/// Kind 1 commits: it is a whole transaction, or the last part of one whose earlier parts (`part` 0, 1, …) are
/// the kind 3 records just before it. Boxes come page by page: the secret boxes of a page's puts, in order,
/// then the page (role 1), whose entries name each secret's length and digest. A page's plaintext is
/// `u8 version (1) ‖ u16 entry count ‖ entries`; an entry is `u8 kind ‖` for a put (1) `u32 A ‖ A bytes of
/// attributes (SPEC.md §7.3's attributes plaintext, item id included) ‖ u32 secret length ‖ secret box digest
/// (16, `secretBoxDigest`)`,
/// for a deletion (2) or a tombstone (3) `item id (16) ‖ i64 time in ms`.
enum RecordV2 {
    /// Length, length check, kind and sequence.
    static let frameHeaderSize = 17
    /// Frame header, part, entry count, box count and frame check.
    static let fixedSize = frameHeaderSize + 16
    /// Where the frame check stands in the record, and how long it is.
    static let frameCheckOffset = fixedSize - 4
    static let frameCheckSize = 4
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

    /// The digest a page names for a secret box: unkeyed BLAKE2b (RFC 7693) with a 16-byte output over the whole
    /// box (nonce ‖ ciphertext ‖ tag). Collision-resistant, unlike the GCM tag, which anyone holding the secret
    /// key can match with other bytes: so the page pins the very box, for every reader, with its key or without.
    /// BLAKE2b takes a box of up to 128 bytes in one compression, half what SHA-256 takes for a short secret's.
    static func secretBoxDigest(_ box: some Sequence<UInt8>) -> BLAKE2bDigest {
        var hasher = digestHasher
        hasher.update(data: box)
        return hasher.finalize()
    }

    /// ``secretBoxDigest(_:)`` of a box in memory, read in place: what a replay computes for every secret box (the
    /// generic form goes through unspecialized code for a slice of a buffer).
    static func secretBoxDigest(_ box: UnsafeRawBufferPointer) -> BLAKE2bDigest {
        var hasher = digestHasher
        hasher.update(bufferPointer: box)
        return hasher.finalize()
    }

    static let secretBoxDigestSize = 16

    private static let digestHasher: BLAKE2b = {
        guard let hasher = try? BLAKE2b(outputByteCount: secretBoxDigestSize) else {
            preconditionFailure("RecordV2: BLAKE2b takes outputs of 1 … 64 bytes")
        }
        return hasher
    }()

    /// The frame check of a record whose first `frameCheckOffset` bytes are `frame` and whose box fields'
    /// headers are `boxFields` (6 bytes each, in order).
    static func frameCheck(frame: some Collection<UInt8>, boxFields: [UInt8]) -> [UInt8] {
        var hash = SHA256()
        hash.update(data: frame)
        hash.update(data: boxFields)
        return Array(hash.finalize().prefix(frameCheckSize))
    }
}
