import Foundation
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// Keys, entries and helpers shared by the version 3 record tests: two groups, A (key id 1) and B (key id 2), and the
/// log side's keys of any epoch.
enum RecordV3Fixture {
    static let fileID = [UInt8](repeating: 0x3F, count: 16)
    static let groupKeyA = SymmetricKey(data: [UInt8](repeating: 0xA1, count: 32))
    static let groupKeyB = SymmetricKey(data: [UInt8](repeating: 0xB2, count: 32))
    static let a = try! GroupKeysV3(groupKey: groupKeyA, fileID: fileID, keyID: 1)
    static let b = try! GroupKeysV3(groupKey: groupKeyB, fileID: fileID, keyID: 2)

    /// Each epoch's chain key differs, as a real epoch's does.
    static func chainKeyBytes(epoch: UInt64) -> [UInt8] { [UInt8](repeating: 0x10 &+ UInt8(truncatingIfNeeded: epoch), count: 32) }
    static let headsKeyBytes = [UInt8](repeating: 0x2E, count: 32)

    static func keys(epoch: UInt64) -> RecordKeysV3 {
        try! RecordKeysV3(fileID: fileID, epoch: epoch, chainKey: SymmetricKey(data: chainKeyBytes(epoch: epoch)), headsKey: SymmetricKey(data: headsKeyBytes))
    }

    /// The epoch's initial previous chain tag (the header's, in a file).
    static func c0(epoch: UInt64) -> [UInt8] { [UInt8](repeating: 0xC0 &+ UInt8(truncatingIfNeeded: epoch), count: 16) }

    static let corrupted = KeychainError.corrupted(offset: 0, reason: "")

    /// A generic password named `n`, with a secret of `secretLength` bytes.
    static func put(_ n: Int, secretLength: Int = 24, generic: Int = 0, using random: inout SplitMix64) throws -> EntryV2 {
        var values: [Attribute: AttributeValue] = [
            .service: .string("service \(n)"), .account: .string("account-\(n)"),
            .creationDate: .date(Date(timeIntervalSince1970: 1_700_000_000)),
            .modificationDate: .date(Date(timeIntervalSince1970: 1_700_000_000 + Double(n))),
        ]
        if generic > 0 { values[.generic] = .bytes([UInt8](repeating: 0x47, count: generic)) }
        let attributes = try ItemAttributes(itemClass: .genericPassword, values: values)
        return .put(id: ItemID(using: &random), attributes: attributes, secret: RecordV2Tests.bytes(secretLength, using: &random))
    }

    /// The offset and reason of the `.corrupted` error `body` throws; nil when it returns or throws something else.
    static func refusal(_ body: () throws(KeychainError) -> Void) -> (offset: Int, reason: String)? {
        do {
            try body()
            return nil
        } catch {
            if case .corrupted(let offset, let reason) = error { return (offset, reason) }
            return nil
        }
    }

    /// Checks decoded entries against those written, secrets decrypted from `bytes` under `keys`.
    static func same(_ decoded: [DecodedEntryV2], _ written: [EntryV2], bytes: [UInt8], keys: GroupKeysV3) -> Bool {
        guard decoded.count == written.count else { return false }
        for (got, expected) in zip(decoded, written) {
            switch (got, expected) {
            case (.put(let id, let attributes, let box), .put(let expectedID, let expectedAttributes, let secret)):
                guard id == expectedID, attributes == expectedAttributes,
                      (try? GroupPageV3.openSecret(box, of: id, in: bytes, keys: keys)) == secret else { return false }
            case (.put(let id, let attributes, let box), .copy(let expectedID, let expectedAttributes, let secretBox)):
                guard id == expectedID, attributes == expectedAttributes, Array(bytes[box]) == secretBox else { return false }
            case (.delete(let id, let time), .delete(let expectedID, let expectedTime)),
                 (.tombstone(let id, let time), .tombstone(let expectedID, let expectedTime)):
                guard id == expectedID, time == expectedTime else { return false }
            default:
                return false
            }
        }
        return true
    }

    /// The pages of a decoded record, in order.
    static func pages(_ record: DecodedRecordV3) -> [OpenedPageV3] {
        record.segments.compactMap { if case .page(let page) = $0 { return page } else { return nil } }
    }

    /// The opaque segments of a decoded record, in order.
    static func opaque(_ record: DecodedRecordV3) -> [OpaqueSegmentV3] {
        record.segments.compactMap { if case .opaque(let segment) = $0 { return segment } else { return nil } }
    }

    /// A group segment `keyID ‖ S ‖ P ‖ page ‖ secrets` with the lengths given (for forgeries: they need not hold).
    static func segment(keyID: UInt8, page: [UInt8], secrets: [UInt8] = [], length: Int? = nil, pageLength: Int? = nil) -> [UInt8] {
        var writer = ByteWriter()
        writer.writeUInt8(keyID)
        writer.writeUInt32(UInt32(length ?? page.count + secrets.count))
        writer.writeUInt32(UInt32(pageLength ?? page.count))
        writer.writeBytes(page)
        writer.writeBytes(secrets)
        return writer.bytes
    }

    /// A heads segment sealing `plaintext` for record `sequence`.
    static func headsSegment(_ plaintext: [UInt8], keys: RecordKeysV3, sequence: UInt64) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: SymmetricKey(data: headsKeyBytes),
                                   authenticating: RecordAADV3.heads(fileID: keys.fileID, epoch: keys.epoch, sequence: sequence)).combined!
        return segment(keyID: 0, page: box)
    }

    /// A record's bytes rewritten with its frame check recomputed after `change` altered them (what anyone can do).
    static func refreshingFrameCheck(_ bytes: [UInt8], segmentHeaders: [Range<Int>]) -> [UInt8] {
        var copy = bytes
        let check = RecordV3.frameCheck(frame: copy[0..<23], segmentHeaders: segmentHeaders.flatMap { Array(copy[$0]) })
        copy.replaceSubrange(23..<27, with: check)
        return copy
    }
}
