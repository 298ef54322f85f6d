/// The associated data of version 3's boxes (Docs/FormatVersion3.md §2.5.1).
///
/// - A group's **page** (50 bytes): `"KCF3 page" ‖ file id ‖ u8 key id ‖ u64 group sequence ‖ previous page tag (16)`.
///   Nothing of the record or the epoch: the segment is copied byte for byte by rewrites that cannot open it, and its
///   place is the group's own chain.
/// - A **secret box** (49 bytes): `"KCF3 secret box" ‖ 00 ‖ file id ‖ u8 key id ‖ item id`: its item only, as version
///   2's; the page that names its length and digest binds it to its place.
/// - The **heads** (42 bytes): `"KCF3 heads" ‖ file id ‖ u64 epoch ‖ u64 record sequence`: remade by every commit, so
///   bound to its place.
enum RecordAADV3 {
    static let pageLabel = Array("KCF3 page".utf8)
    /// `"KCF3 secret box"` and a zero byte: 16 bytes, so that with the file id the constant part is two blocks.
    static let secretLabel = Array("KCF3 secret box".utf8) + [0]
    static let headsLabel = Array("KCF3 heads".utf8)
    static let pageSize = 50
    static let secretSize = 49
    static let headsSize = 42

    static func page(fileID: [UInt8], keyID: UInt8, groupSequence: UInt64, previousTag: some Collection<UInt8>) -> [UInt8] {
        var writer = ByteWriter(capacity: pageSize)
        writer.writeBytes(pageLabel)
        writer.writeBytes(fileID)
        writer.writeUInt8(keyID)
        writer.writeUInt64(groupSequence)
        writer.writeBytes(previousTag)
        return writer.bytes
    }

    static func secret(fileID: [UInt8], keyID: UInt8, itemID: ItemID) -> [UInt8] {
        var writer = ByteWriter(capacity: secretSize)
        writer.writeBytes(secretLabel)
        writer.writeBytes(fileID)
        writer.writeUInt8(keyID)
        writer.writeBytes(itemID.bytes)
        return writer.bytes
    }

    static func heads(fileID: [UInt8], epoch: UInt64, sequence: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: headsSize)
        writer.writeBytes(headsLabel)
        writer.writeBytes(fileID)
        writer.writeUInt64(epoch)
        writer.writeUInt64(sequence)
        return writer.bytes
    }
}
