import Foundation
import Testing
@testable import KeychainFile
import KeychainCrypto

/// Records sealed on several threads (``RecordSealer``: boxes sealed with zero chain values in parallel, their
/// tags completed in file order) are byte for byte the records sealed on the calling thread with the same
/// generator, and decode to what was sealed.
@Suite("Parallel sealing of large records")
struct ParallelSealingTests {
    static let date = Date(timeIntervalSince1970: 1_700_000_000)

    /// `count` entries of every kind the encoder meets, made afresh for each encoding (a reserved block is
    /// sealed once): puts whose secret a batch keeps in the item's reserved block, puts whose secret is an
    /// array (sealed into the record's arena, as a rewrite's or an update's), puts whose block is reserved but
    /// whose secret is an array (copied into the block), every seventh a deletion, secrets of 0 to 4,000 bytes
    /// and a few attributes of 60,000 bytes, so that windows end on the byte limit as well as the entry limit.
    static func entries(count: Int) throws -> [LogEntry] {
        try (0..<count).map { (index) throws(KeychainError) -> LogEntry in
            let id = try ItemID(bytes: (0..<16).map { UInt8(truncatingIfNeeded: index >> (8 * ($0 % 4))) ^ UInt8($0) ^ 0x5A })
            if index % 7 == 3 { return .delete(id: id) }
            var values: [Attribute: AttributeValue] = [
                .service: .string("service \(index % 13)"), .account: .string("account \(index)"),
                .creationDate: .date(date), .modificationDate: .date(date),
            ]
            if index % 500 == 11 { values[.comment] = .string(String(repeating: "c", count: 60_000)) }
            let attributes = try ItemAttributes(itemClass: .genericPassword, values: values)
            let secret = (0..<((index * 37) % (index % 50 == 0 ? 4_001 : 300))).map { UInt8(truncatingIfNeeded: $0 &* 3 &+ index) }
            switch index % 3 {
            case 0:
                let block = ItemBytes.makeReserved(attributes: attributes.encoded, secret: secret)
                let stamped = ItemAttributes(itemClass: attributes.itemClass, count: attributes.count, encoded: block.attributesView)
                return .put(id: id, attributes: stamped, secret: .inReservedBlock(count: secret.count))
            case 1:
                return .put(id: id, attributes: attributes, secret: .bytes(secret))
            default:
                let block = ItemBytes.makeReserved(attributes: attributes.encoded, secret: [UInt8](repeating: 0xEE, count: secret.count))
                let stamped = ItemAttributes(itemClass: attributes.itemClass, count: attributes.count, encoded: block.attributesView)
                return .put(id: id, attributes: stamped, secret: .bytes(secret))
            }
        }
    }

    /// What one encoding gave: the frame, the chain value, and each put's secret box with its chain value.
    struct Sealed: Equatable {
        var frame: [UInt8] = []
        var chainValue: [UInt8] = []
        var boxCount = 0
        var puts: [[UInt8]] = []
        var entryBytes: [UInt32] = []
    }

    static func seal(_ entries: [LogEntry], context: RecordContext, previousChain: [UInt8], tuning: ParallelTuning) throws -> Sealed {
        var generator = TestRandom(seed: 0x5EA1_1DE5)
        var sealed = Sealed()
        let encoded = try ParallelTuning.$current.withValue(tuning) { () throws -> RecordEncoder.Encoded in
            try RecordEncoder.encode(
                entries, sequence: 9, previousChain: previousChain, context: context, using: &generator
            ) { (bytes, offset) throws(KeychainError) in
                if sealed.frame.count < offset + bytes.count {
                    sealed.frame += [UInt8](repeating: 0, count: offset + bytes.count - sealed.frame.count)
                }
                sealed.frame.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
            }
        }
        sealed.chainValue = encoded.chainValue
        sealed.boxCount = encoded.boxCount
        for put in encoded.puts {
            let secret = encoded.secret(of: put)
            sealed.puts.append(secret.previousChain + secret.box.withUnsafeBytes { Array($0) })
            sealed.entryBytes.append(put.entryByteCount)
        }
        return sealed
    }

    @Test("Sealed on several threads, in windows of every size, a large record is the record sealed on one")
    func parallelEqualsSequential() throws {
        let context = RecordContext(fileID: (0..<16).map { UInt8($0 * 11) }, epoch: 3, recordKey: SymmetricKey(size: .bits256))
        let previousChain = (0..<16).map { UInt8(200 - $0) }
        let count = RecordSealer.windowEntryLimit + 1_000
        let sequential = try Self.seal(try Self.entries(count: count), context: context, previousChain: previousChain, tuning: .sequential)
        let puts = (0..<count).filter { $0 % 7 != 3 }.count
        #expect(sequential.puts.count == puts)
        #expect(sequential.boxCount == 2 * puts + (count - puts))

        let tunings = [
            ParallelTuning(workerCount: 2, minimumParallelEntries: 2, windowSize: RecordEncoder.chunkSize),
            ParallelTuning(workerCount: 3, minimumParallelEntries: 2, windowSize: RecordEncoder.chunkSize),
            ParallelTuning(workerCount: 8, minimumParallelEntries: 64, windowSize: RecordEncoder.chunkSize),
            .automatic,
        ]
        for tuning in tunings {
            let parallel = try Self.seal(try Self.entries(count: count), context: context, previousChain: previousChain, tuning: tuning)
            #expect(parallel == sequential, "\(tuning.workerCount) workers, at least \(tuning.minimumParallelEntries) entries")
        }

        // And the frame is a record a reader accepts, with the secrets the encoder reports.
        let directory = TemporaryDirectory()
        let path = directory.file("frame.bin")
        try writeFileBytes(sequential.frame, to: path)
        let file = try PosixFileSystem().openExisting(path)
        defer { file.close() }
        var reader = FrameBodyReader(
            file: file, bodyOffset: Format.frameHeaderSize, bodyLength: sequential.frame.count - Format.frameHeaderSize,
            windowSize: RecordEncoder.chunkSize)
        let decoded = try RecordDecoder.decode(&reader, expectedSequence: 9, previousChain: previousChain, context: context)
        #expect(decoded.chainValue == sequential.chainValue)
        #expect(decoded.boxCount == sequential.boxCount)
        let original = try Self.entries(count: count)
        var putIndex = 0
        for (index, entry) in decoded.entries.enumerated() {
            switch (entry, original[index]) {
            case (.put(let id, let attributes, let secret), .put(let originalID, let originalAttributes, let pending)):
                #expect(id == originalID && attributes == originalAttributes, "entry \(index)")
                #expect(secret.previousChain + secret.box.withUnsafeBytes { Array($0) } == sequential.puts[putIndex], "entry \(index)")
                let opened = try secret.open(using: context.recordKey, authenticating: BoxAAD.make(
                    fileID: context.fileID, epoch: context.epoch, sequence: 9, kind: .transaction, entryCount: UInt32(count),
                    entryIndex: UInt32(index), role: .secret, itemID: id, previousChain: secret.previousChain))
                #expect(opened == pending.plaintext(attributes: originalAttributes), "entry \(index)")
                putIndex += 1
            case (.delete(let id), .delete(let originalID)):
                #expect(id == originalID, "entry \(index)")
            default:
                Issue.record("entry \(index) decodes to another kind")
            }
        }
        #expect(putIndex == puts)
    }

    @Test("A secret over the limit is refused, sequentially or in parallel, before anything is written")
    func oversizedSecretIsRefused() throws {
        let context = RecordContext(fileID: [UInt8](repeating: 1, count: 16), epoch: 1, recordKey: SymmetricKey(size: .bits256))
        var entries = try Self.entries(count: 300)
        // A secret over the limit is refused before anything is sealed.
        let id = try ItemID(bytes: [UInt8](repeating: 9, count: 16))
        let attributes = try ItemAttributes(
            itemClass: .genericPassword, values: [.account: .string("big"), .creationDate: .date(Self.date), .modificationDate: .date(Self.date)])
        entries[150] = .put(id: id, attributes: attributes, secret: .bytes([UInt8](repeating: 0, count: Format.maximumSecretSize + 1)))
        for tuning in [ParallelTuning.sequential, ParallelTuning(workerCount: 2, minimumParallelEntries: 2, windowSize: RecordEncoder.chunkSize)] {
            var generator = TestRandom(seed: 1)
            var writes = 0
            let error = ParallelTuning.$current.withValue(tuning) { () -> KeychainError? in
                do throws(KeychainError) {
                    _ = try RecordEncoder.encode(entries, sequence: 1, previousChain: [UInt8](repeating: 0, count: 16), context: context, using: &generator) {
                        (_, _) throws(KeychainError) in writes += 1
                    }
                    return nil
                } catch {
                    return error
                }
            }
            #expect(error == .invalidParameter("the secret is 1048577 bytes; the limit is 1,048,576"))
            #expect(writes == 0)
        }
    }
}
