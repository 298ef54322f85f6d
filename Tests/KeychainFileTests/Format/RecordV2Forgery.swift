@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// What a writer with a bug, or a holder of the keys, could write into a version 2 record: a frame check
/// recomputed after a change (the check is unkeyed), a page sealed again over a changed plaintext. Tests use
/// them so that what is refused is refused by the check they mean to exercise, not by an earlier one.
enum RecordV2Forgery {
    static func u32(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) }

    static func put32(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(i))) }
    }

    /// Recomputes the frame check of the record at `offset` after its frame or box fields were changed.
    static func refreshFrameCheck(_ bytes: inout [UInt8], at offset: Int = 0) {
        let end = offset + 8 + u32(bytes, offset)
        var fields: [UInt8] = []
        var position = offset + RecordV2.fixedSize
        while position + RecordV2.boxFieldHeaderSize <= end {
            fields += bytes[position..<(position + RecordV2.boxFieldHeaderSize)]
            position += RecordV2.boxFieldHeaderSize + u32(bytes, position + 2)
        }
        let check = RecordV2.frameCheck(frame: bytes[offset..<(offset + RecordV2.frameCheckOffset)], boxFields: fields)
        bytes.replaceSubrange((offset + RecordV2.frameCheckOffset)..<(offset + RecordV2.fixedSize), with: check)
    }

    /// Opens every page of the record at 0 from `page` on, lets `change` alter that page's plaintext (same
    /// length), and seals each again under the record key with its own nonce, chained anew, so that the record
    /// authenticates with the changed page. Returns the record's new chain value.
    @discardableResult
    static func resealPage(
        _ bytes: inout [UInt8], page index: Int, previousChain: [UInt8], keys: RecordKeysV2, change: (inout [UInt8]) -> Void
    ) throws -> [UInt8] {
        let record = try RecordV2Decoder.scan(bytes, at: 0)
        var oldChain = index == 0 ? previousChain : Array(bytes[record.pages[index - 1].box.suffix(16)])
        var newChain = oldChain
        for number in index..<record.pages.count {
            let page = record.pages[number]
            let place = BoxAADV2.PagePlace(
                sequence: record.sequence, kind: record.kind.rawValue, part: record.part, entryCount: record.entryCount,
                boxCount: record.boxCount, boxIndex: page.boxIndex, keyID: 0)
            let oldAAD = BoxAADV2.page(fileID: keys.fileID, epoch: keys.epoch, place: place, previousChain: oldChain)
            let newAAD = BoxAADV2.page(fileID: keys.fileID, epoch: keys.epoch, place: place, previousChain: newChain)
            let box = Array(bytes[page.box])
            var plaintext = [UInt8](repeating: 0, count: box.count - 28)
            try box.withUnsafeBytes { box in
                try oldAAD.withUnsafeBytes { aad in
                    try plaintext.withUnsafeMutableBytes { try AES.GCM.open(box, using: keys.page, authenticating: aad, into: $0) }
                }
            }
            if number == index { change(&plaintext) }
            var sealed = [UInt8](repeating: 0, count: box.count)
            let nonce = try AES.GCM.Nonce(data: box.prefix(12))
            try plaintext.withUnsafeBytes { text in
                try newAAD.withUnsafeBytes { aad in
                    try sealed.withUnsafeMutableBytes { try AES.GCM.seal(text, using: keys.page, nonce: nonce, authenticating: aad, into: $0) }
                }
            }
            oldChain = Array(box.suffix(16))
            newChain = Array(sealed.suffix(16))
            bytes.replaceSubrange(page.box, with: sealed)
        }
        return newChain
    }
}
