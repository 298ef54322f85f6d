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

    /// A secret box for `id`, sealed as the encoder seals one.
    static func sealSecret(_ secret: [UInt8], id: ItemID, keys: RecordKeysV2, using random: inout SplitMix64) throws -> [UInt8] {
        try seal(secret, aad: BoxAADV2.secret(fileID: keys.fileID, keyID: 0, itemID: id), key: keys.secret, using: &random)
    }

    /// A put's entry in a page's plaintext: kind 1, its attributes, the secret length and the digest named.
    static func putEntry(id: ItemID, attributes: ItemAttributes, secretLength: UInt32, digest: [UInt8]) -> [UInt8] {
        let encoded = AttributeCoding.encode(id: id, attributes: attributes)
        var writer = ByteWriter()
        writer.writeUInt8(1)
        writer.writeUInt32(UInt32(encoded.count))
        writer.writeBytes(encoded)
        writer.writeUInt32(secretLength)
        writer.writeBytes(digest)
        return writer.bytes
    }

    /// A record sealed from raw parts: each page's secret boxes (sealed already) and its plaintext, whatever it
    /// holds, under the entry count given (true or not), with a frame check that passes. So a test reaches the
    /// page parser, or a caller's count checks, with pages that authenticate.
    static func record(
        pages: [(secrets: [[UInt8]], plaintext: [UInt8])], entryCount: UInt32, sequence: UInt64 = 1,
        previousChain: [UInt8], keys: RecordKeysV2, using random: inout SplitMix64
    ) throws -> (bytes: [UInt8], chain: [UInt8]) {
        let boxCount = UInt32(pages.reduce(0) { $0 + $1.secrets.count + 1 })
        var body = ByteWriter()
        var chain = previousChain
        var boxIndex: UInt32 = 0
        var fields: [UInt8] = []
        for page in pages {
            for secret in page.secrets {
                fields += field(role: 2, length: secret.count)
                body.writeBytes(field(role: 2, length: secret.count) + secret)
                boxIndex += 1
            }
            let place = BoxAADV2.PagePlace(
                sequence: sequence, kind: RecordV2.Kind.commit.rawValue, part: 0, entryCount: entryCount, boxCount: boxCount,
                boxIndex: boxIndex, keyID: 0)
            let box = try seal(page.plaintext, aad: BoxAADV2.page(fileID: keys.fileID, epoch: keys.epoch, place: place, previousChain: chain), key: keys.page, using: &random)
            fields += field(role: 1, length: box.count)
            body.writeBytes(field(role: 1, length: box.count) + box)
            boxIndex += 1
            chain = Array(box.suffix(16))
        }
        var frame = ByteWriter()
        let length = UInt32(RecordV2.fixedSize - 8 + body.count)
        frame.writeUInt32(length)
        frame.writeUInt32(length ^ 0xFFFF_FFFF)
        frame.writeUInt8(RecordV2.Kind.commit.rawValue)
        frame.writeUInt64(sequence)
        frame.writeUInt32(0)
        frame.writeUInt32(entryCount)
        frame.writeUInt32(boxCount)
        frame.writeBytes(RecordV2.frameCheck(frame: frame.bytes, boxFields: fields))
        return (frame.bytes + body.bytes, chain)
    }

    private static func field(role: UInt8, length: Int) -> [UInt8] {
        [0, role] + (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) }
    }

    private static func seal(_ plaintext: [UInt8], aad: [UInt8], key: AES.GCM.PreparedKey, using random: inout SplitMix64) throws -> [UInt8] {
        var box = [UInt8](repeating: 0, count: plaintext.count + 28)
        let nonce = AES.GCM.Nonce(using: &random)
        try plaintext.withUnsafeBytes { text in
            try aad.withUnsafeBytes { aad in
                try box.withUnsafeMutableBytes { try AES.GCM.seal(text, using: key, nonce: nonce, authenticating: aad, into: $0) }
            }
        }
        return box
    }
}
