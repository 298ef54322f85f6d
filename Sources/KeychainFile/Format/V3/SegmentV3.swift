/// Where one segment of a version 3 record lies in bytes that hold it (Docs/FormatVersion3.md §2.5.1): what a scan
/// finds from its 9-byte header, every range checked to lie within the bytes before it was made.
struct SegmentV3: Sendable, Equatable {
    let keyID: UInt8
    /// The whole segment, header included: what a rewrite copies.
    let range: Range<Int>
    /// The page box (or the heads box): nonce ‖ ciphertext ‖ tag.
    let pageBox: Range<Int>
    /// The secret boxes of the page's puts, back to back (empty for the heads).
    let secrets: Range<Int>

    /// The page box's tag, what the chain tag and the group chain bind.
    var pageTag: Range<Int> { (pageBox.upperBound - 16)..<pageBox.upperBound }

    /// The segment's 9-byte header as the frame check and the chain tag read it: key id ‖ u32 S ‖ u32 P.
    var header: [UInt8] {
        var writer = ByteWriter(capacity: RecordV3.segmentHeaderSize)
        writer.writeUInt8(keyID)
        writer.writeUInt32(UInt32(pageBox.count + secrets.count))
        writer.writeUInt32(UInt32(pageBox.count))
        return writer.bytes
    }

    /// Reads the segment whose header is at `offset` in `bytes`, ending at or before `limit`.
    ///
    /// - Throws: `.corrupted` (offset relative to `base`) when a length is out of bounds or runs past `limit`.
    static func read(_ bytes: [UInt8], at offset: Int, limit: Int, base: Int, index: Int) throws(KeychainError) -> SegmentV3 {
        func corrupted(_ at: Int, _ reason: String) -> KeychainError { .corrupted(offset: at - base, reason: "record: segment \(index): \(reason)") }
        guard offset >= 0, limit <= bytes.count, offset <= limit, limit - offset >= RecordV3.segmentHeaderSize else {
            throw corrupted(offset, "its header runs past the segments' end")
        }
        var reader = ByteReader(bytes, range: offset..<limit)
        do {
            let keyID = try reader.readUInt8("key id")
            let length = Int(try reader.readUInt32("segment length"))
            let pageLength = Int(try reader.readUInt32("page box length"))
            guard length >= RecordV3.boxOverhead, pageLength >= RecordV3.boxOverhead, pageLength <= length else {
                throw corrupted(offset + 1, "segment length \(length) and page box length \(pageLength): a box is at least 28 bytes and the page within the segment")
            }
            guard length <= reader.remaining else { throw corrupted(offset + 1, "its \(length) bytes run \(length - reader.remaining) past the segments' end") }
            let page = try reader.readRange(pageLength, "page box")
            let secrets = try reader.readRange(length - pageLength, "secret boxes")
            return SegmentV3(keyID: keyID, range: offset..<secrets.upperBound, pageBox: page, secrets: secrets)
        } catch let error as KeychainError {
            throw error
        } catch let underflow as ByteReader.Underflow {
            throw corrupted(underflow.offset, "truncated \(underflow.field)")
        } catch {
            throw corrupted(offset, "\(error)")
        }
    }
}
