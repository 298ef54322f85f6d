/// The associated data of version 2 boxes (Docs/FormatVersion2.md §5).
///
/// A page (role 1) is bound to its place: `"KCF2" ‖ file id ‖ u64 epoch ‖ u64 sequence ‖ u8 kind ‖ u32 part ‖
/// u32 entry count ‖ u32 box count ‖ u32 box index ‖ u8 key id ‖ previous chain value (16)`, 70 bytes; the
/// previous chain value is the tag of the page before it in the epoch (C0 for the first).
///
/// A secret box (role 2) is bound to its item only — `"KCF2 secret box" ‖ 0x00 ‖ file id ‖ u8 key id ‖ item id`,
/// 49 bytes — so a rewrite copies it unchanged; the page that names its length and digest binds it to its place.
enum BoxAADV2 {
    static let pageSize = 70
    static let secretSize = 49

    struct PagePlace: Equatable {
        let sequence: UInt64
        let kind: UInt8
        let part: UInt32
        let entryCount: UInt32
        let boxCount: UInt32
        let boxIndex: UInt32
        let keyID: UInt8
    }

    static func page(fileID: [UInt8], epoch: UInt64, place: PagePlace, previousChain: some Collection<UInt8>) -> [UInt8] {
        var writer = ByteWriter(capacity: pageSize)
        writer.writeBytes(Array("KCF2".utf8))
        writer.writeBytes(fileID)
        writer.writeUInt64(epoch)
        writer.writeUInt64(place.sequence)
        writer.writeUInt8(place.kind)
        writer.writeUInt32(place.part)
        writer.writeUInt32(place.entryCount)
        writer.writeUInt32(place.boxCount)
        writer.writeUInt32(place.boxIndex)
        writer.writeUInt8(place.keyID)
        writer.writeBytes(previousChain)
        return writer.bytes
    }

    static func secret(fileID: [UInt8], keyID: UInt8, itemID: ItemID) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: secretSize)
        writeSecret(fileID: fileID, keyID: keyID, itemID: itemID, into: &bytes, at: 0)
        return bytes
    }

    /// Writes what `secret` returns into `buffer` at `offset`, without allocating.
    static func writeSecret(fileID: [UInt8], keyID: UInt8, itemID: ItemID, into buffer: inout [UInt8], at offset: Int) {
        buffer.replaceSubrange(offset..<(offset + 16), with: secretLabel)
        buffer.replaceSubrange((offset + 16)..<(offset + 32), with: fileID)
        buffer[offset + 32] = keyID
        itemID.withUnsafeBytes { id in
            for index in 0..<16 { buffer[offset + 33 + index] = id[index] }
        }
    }

    /// `"KCF2 secret box"` and a zero byte: 16 bytes, so that with the file id the constant part is two blocks.
    static let secretLabel = Array("KCF2 secret box".utf8) + [0]
}
