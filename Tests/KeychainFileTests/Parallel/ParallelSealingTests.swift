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
            if index % 100 == 11 { values[.comment] = .string(String(repeating: "c", count: 60_000)) }
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
        // The large attributes end the first window on the byte limit, before the entry limit.
        #expect(RecordSealer.windowEnd(of: try Self.entries(count: count), from: 0) < RecordSealer.windowEntryLimit)
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
        let decoded = try withFrameBodyReader(
            overFrame: sequential.frame, writtenTo: directory.file("frame.bin"), windowSize: RecordEncoder.chunkSize
        ) { reader in
            try RecordDecoder.decode(&reader, expectedSequence: 9, previousChain: previousChain, context: context)
        }
        #expect(decoded.chainValue == sequential.chainValue)
        #expect(decoded.boxCount == sequential.boxCount)
        let original = try Self.entries(count: count)
        var putIndex = 0
        for (index, entry) in decoded.entries.enumerated() {
            switch (entry, original[index]) {
            case (.put(let id, let attributes, let secret), .put(let originalID, let originalAttributes, let pending)):
                #expect(id == originalID && attributes == originalAttributes, "entry \(index)")
                #expect(secret.previousChain + secret.box.withUnsafeBytes { Array($0) } == sequential.puts[putIndex], "entry \(index)")
                let opened = try secret.open(using: context.boxKey, authenticating: BoxAAD.make(
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

    /// The error encoding `entries` gives, sequentially and in parallel (the same), or `nil`.
    static func encodingError(_ entries: [LogEntry]) throws -> KeychainError? {
        let context = RecordContext(fileID: [UInt8](repeating: 1, count: 16), epoch: 1, recordKey: SymmetricKey(size: .bits256))
        var errors: [KeychainError?] = []
        for tuning in [ParallelTuning.sequential, ParallelTuning(workerCount: 2, minimumParallelEntries: 2, windowSize: RecordEncoder.chunkSize)] {
            var generator = TestRandom(seed: 1)
            errors.append(ParallelTuning.$current.withValue(tuning) { () -> KeychainError? in
                do throws(KeychainError) {
                    _ = try RecordEncoder.encode(entries, sequence: 1, previousChain: [UInt8](repeating: 0, count: 16), context: context, using: &generator) {
                        (_, _) throws(KeychainError) in
                    }
                    return nil
                } catch {
                    return error
                }
            })
        }
        #expect(errors[0] == errors[1])
        return errors[0]
    }

    static func plainAttributes(_ account: String) throws(KeychainError) -> ItemAttributes {
        try ItemAttributes(
            itemClass: .genericPassword, values: [.account: .string(account), .creationDate: .date(date), .modificationDate: .date(date)])
    }

    @Test("A secret over the limit, or secrets too large for one record, are refused with a typed error before any sealing")
    func oversizedRecordsAreRefused() throws {
        var entries = try Self.entries(count: 300)
        entries[150] = .put(
            id: try ItemID(bytes: [UInt8](repeating: 9, count: 16)), attributes: try Self.plainAttributes("big"),
            secret: .bytes([UInt8](repeating: 0, count: Format.maximumSecretSize + 1)))
        #expect(try Self.encodingError(entries) == .invalidParameter("the secret is 1048577 bytes; the limit is 1,048,576"))

        // 2,100 secrets of 1 MiB (one shared array) need more than 2 GiB of arena: refused, not allocated.
        let secret = [UInt8](repeating: 7, count: Format.maximumSecretSize)
        let many: [LogEntry] = try (0..<2_100).map { (index) throws(KeychainError) -> LogEntry in
            .put(id: try ItemID(bytes: (0..<16).map { UInt8(truncatingIfNeeded: index >> (8 * ($0 % 2))) }), attributes: try Self.plainAttributes("a\(index)"),
                 secret: .bytes(secret))
        }
        #expect(try Self.encodingError(many) == .limitReached("the record would be more than 256 MiB (use smaller batches)"))
    }

    @Test("Two puts of one record that name the same reserved block: the second is sealed apart, or refused if its secret is the block's")
    func sharedReservedBlock() throws {
        let context = RecordContext(fileID: [UInt8](repeating: 2, count: 16), epoch: 1, recordKey: SymmetricKey(size: .bits256))
        func reservedPut(_ secret: [UInt8]) throws -> (ItemAttributes, ItemBytes) {
            let attributes = try Self.plainAttributes("shared")
            let block = ItemBytes.makeReserved(attributes: attributes.encoded, secret: secret)
            return (ItemAttributes(itemClass: attributes.itemClass, count: attributes.count, encoded: block.attributesView), block)
        }
        let first = try ItemID(bytes: [UInt8](repeating: 1, count: 16)), second = try ItemID(bytes: [UInt8](repeating: 2, count: 16))

        // The second put's secret is an array of the same size: it goes to an arena of its own, and both decode.
        let secret = Array("the block's own secret".utf8), other = Array("another secret, same size".utf8.prefix(secret.count))
        let (stamped, block) = try reservedPut(secret)
        var frame: [UInt8] = []
        var generator = TestRandom(seed: 3)
        let encoded = try RecordEncoder.encode(
            [.put(id: first, attributes: stamped, secret: .inReservedBlock(count: secret.count)),
             .put(id: second, attributes: stamped, secret: .bytes(other))],
            sequence: 1, previousChain: [UInt8](repeating: 0, count: 16), context: context, using: &generator
        ) { (bytes, offset) throws(KeychainError) in
            if frame.count < offset + bytes.count { frame += [UInt8](repeating: 0, count: offset + bytes.count - frame.count) }
            frame.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
        }
        #expect(encoded.puts.count == 2)
        #expect(encoded.puts[0].box.storage === block && encoded.puts[1].box.storage !== block)
        #expect(!block.layout.isReserved && !block.layout.isClaimed)
        for (index, expected) in [(0, secret), (1, other)] {
            let sealed = encoded.secret(of: encoded.puts[index])
            let aad = BoxAAD.make(
                fileID: context.fileID, epoch: 1, sequence: 1, kind: .transaction, entryCount: 2, entryIndex: UInt32(index), role: .secret,
                itemID: index == 0 ? first : second, previousChain: sealed.previousChain)
            #expect(try sealed.open(using: context.boxKey, authenticating: aad) == expected)
        }

        // Both keep their secret in the block: the second cannot be sealed, and the error says so.
        let (again, _) = try reservedPut(secret)
        let error = try Self.encodingError([
            .put(id: first, attributes: again, secret: .inReservedBlock(count: secret.count)),
            .put(id: second, attributes: again, secret: .inReservedBlock(count: secret.count)),
        ])
        #expect(error == .invalidParameter("internal error: a secret kept in a reserved block that is not the put's own"))
    }

    @Test("A large batch whose write fails after sealing has begun leaves no plaintext in its blocks and changes nothing; a retry commits")
    func failedWriteOfALargeBatch() throws {
        let directory = TemporaryDirectory()
        let faulty = FaultyFileSystem()
        let path = directory.file("faulty.kcf")
        let keychain = try Keychain.createForTesting(at: path, fileSystem: faulty)
        // 2,500 items of 1 KiB: three windows and a record of about 3.2 MiB, whose pieces after the first are
        // written as they fill (the first, with the frame header, last). The first write fails, after two windows
        // were sealed and before the third was: blocks of both kinds are abandoned. Each secret starts with its
        // own marker.
        func secret(_ index: Int) -> [UInt8] {
            Array("marker \(index) of a 1 KiB secret;".utf8) + [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 1_000)
        }
        func containsMarker(_ block: ItemBytes, _ index: Int) -> Bool {
            let marker = Array(secret(index).prefix(24))
            return block.withBytes { bytes in
                bytes.count >= marker.count && (0...(bytes.count - marker.count)).contains { start in
                    marker.indices.allSatisfy { bytes[start + $0] == marker[$0] }
                }
            }
        }
        let count = 2_500
        var blocks: [(Int, ItemBytes)] = []
        faulty.fail(.write, call: 1)
        #expect(throws: KeychainError.self) {
            try keychain.batch { (batch) throws(KeychainError) in
                for index in 0..<count {
                    try batch.add(GenericPassword(service: "bulk", account: "a\(index)", value: secret(index)))
                }
                for item in try batch.matching(.genericPassword(service: "bulk")) {
                    let account = item.attributes[.account].flatMap { if case .string(let text) = $0 { text } else { nil } } ?? ""
                    blocks.append((Int(account.dropFirst()) ?? -1, item.attributes.encoded.storage))
                }
            }
        }
        #expect(faulty.fired)
        faulty.heal()
        #expect(blocks.count == count)
        #expect(!blocks.contains { containsMarker($0.1, $0.0) }, "an abandoned batch left a plaintext secret in a block")
        #expect(keychain.count == 0)

        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<count { try batch.add(GenericPassword(service: "bulk", account: "a\(index)", value: secret(index))) }
        }
        let reopened = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(reopened.count == count)
        for index in [0, 1_024, 2_499] { #expect(try reopened.data(forService: "bulk", account: "a\(index)") == secret(index)) }
    }
}
