import Foundation
import Testing
@testable import KeychainFile
import KeychainCrypto

/// Large transactions whose boxes are opened on several threads (``WindowedRecordDecoder``) decode to what
/// the sequential loop decodes, and fail with the problem it meets first: same offset, reason and kind, so
/// that replay's torn-tail and corruption decisions do not change (SPEC.md §9.2).
///
/// Every comparison is against ``ParallelTuning/sequential``; windows far smaller than the default make
/// entries straddle windows in every possible place, and a minimum of 2 entries puts even small batches on
/// two threads.
/// Format version 1, whatever the default: the tests check version 1's records and boxes, read from the file by their layout.
@Suite("Parallel replay of large records")
struct ParallelReplayTests {
    /// Parallel tunings: small windows (a field per window, a few entries, a few hundred entries) and the default,
    /// with one worker beside the calling thread; and with three, which share each window (``WindowWorkers``).
    static let parallelTunings: [ParallelTuning] = [1, 97, 4_096, 65_536, RecordEncoder.chunkSize].map {
        ParallelTuning(workerCount: 2, minimumParallelEntries: 2, windowSize: $0)
    } + [97, 4_096].map { ParallelTuning(workerCount: 4, minimumParallelEntries: 2, windowSize: $0) }

    // MARK: - Decoding one frame

    /// A frame sealed by ``RecordEncoder`` in a file of its own, with what it was sealed under.
    struct SealedFrame {
        let path: String
        let frame: [UInt8]
        let context: RecordContext
        let previousChain: [UInt8]
        /// The entries as the encoder says a reader decodes them.
        let encoded: [DecodedEntry]
    }

    /// `count` entries: puts with secrets of 0 to 700 bytes (so that entries end anywhere in a window) and,
    /// every seventh, a deletion; the puts' attributes are made invalid (no dates) for the indices in
    /// `invalid`, which seals an authentic record that does not decode.
    static func sealFrame(count: Int, invalid: Set<Int> = [], in directory: TemporaryDirectory) throws -> SealedFrame {
        // The nonces from a seeded generator (the record key is random): under the thread sanitizer, a
        // SystemRandomNumberGenerator passed inout to the encoder crashes the test process (a SEGV in
        // RecordEncoder.encode's Nonce(using:), a zero-sized inout value; not a race), which made
        // `Scripts/thread-sanitizer.sh ParallelReplay` unusable.
        var generator = TestRandom(seed: 0x5EA1_F4A3)
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let entries: [LogEntry] = try (0..<count).map { (index) throws(KeychainError) -> LogEntry in
            let id = try ItemID(bytes: (0..<16).map { UInt8(truncatingIfNeeded: index >> (8 * ($0 % 4))) ^ UInt8($0) })
            if index % 7 == 3 { return .delete(id: id) }
            var values: [Attribute: AttributeValue] = [.service: .string("service \(index % 13)"), .account: .string("account \(index)")]
            if !invalid.contains(index) {
                values[.creationDate] = .date(date)
                values[.modificationDate] = .date(date)
            }
            let secret = (0..<((index * 37) % 701)).map { UInt8(truncatingIfNeeded: $0 &+ index) }
            return .put(id: id, attributes: try ItemAttributes(itemClass: .genericPassword, values: values), secret: .bytes(secret))
        }
        let context = RecordContext(
            fileID: (0..<16).map { _ in UInt8.random(in: 0...255) }, epoch: 1, recordKey: SymmetricKey(size: .bits256))
        let previousChain = (0..<16).map { _ in UInt8.random(in: 0...255) }
        var frame: [UInt8] = []
        let encoded = try RecordEncoder.encode(
            entries, sequence: 1, previousChain: previousChain, context: context, using: &generator
        ) { (bytes, offset) throws(KeychainError) in
            if frame.count < offset + bytes.count { frame += [UInt8](repeating: 0, count: offset + bytes.count - frame.count) }
            frame.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
        }
        let path = directory.file("frame.bin")
        try writeFileBytes(frame, to: path)
        return SealedFrame(path: path, frame: frame, context: context, previousChain: previousChain, encoded: encoded.decodedEntries(of: entries))
    }

    /// What decoding a frame gave, in a form that compares: every entry (id, attributes, sealed secret) or
    /// the problem (offset, reason, kind).
    enum DecodeResult: Equatable, CustomStringConvertible {
        case entries([EntrySummary], chainValue: [UInt8], boxCount: Int)
        case problem(offset: Int, reason: String, isSemantic: Bool)

        var description: String {
            switch self {
            case .entries(let entries, _, let boxCount): return "\(entries.count) entries, \(boxCount) boxes"
            case .problem(let offset, let reason, let isSemantic): return "problem at \(offset): \(reason)\(isSemantic ? " (semantic)" : "")"
            }
        }
    }

    enum EntrySummary: Equatable {
        case put(ItemID, ItemAttributes, SealedSecret)
        case delete(ItemID)

        init(_ entry: DecodedEntry) {
            switch entry {
            case .put(let id, let attributes, let secret): self = .put(id, attributes, secret)
            case .delete(let id): self = .delete(id)
            }
        }
    }

    /// Decodes the frame (whose bytes are `bytes`, written to a file) with `tuning`, as replay does.
    static func decode(_ sealed: SealedFrame, bytes: [UInt8]? = nil, tuning: ParallelTuning) throws -> DecodeResult {
        try withFrameBodyReader(overFrame: bytes ?? sealed.frame, writtenTo: sealed.path + ".copy", windowSize: tuning.windowSize) { reader in
            ParallelTuning.$current.withValue(tuning) {
                do throws(FrameProblem) {
                    let decoded = try RecordDecoder.decode(
                        &reader, expectedSequence: 1, previousChain: sealed.previousChain, context: sealed.context)
                    return .entries(decoded.entries.map(EntrySummary.init), chainValue: decoded.chainValue, boxCount: decoded.boxCount)
                } catch {
                    return .problem(offset: error.offset, reason: error.reason, isSemantic: error.isSemantic)
                }
            }
        }
    }

    @Test("A large transaction decodes to the encoder's entries, in parallel as sequentially, whatever the window")
    func parallelDecodeEqualsSequential() throws {
        let directory = TemporaryDirectory()
        let sealed = try Self.sealFrame(count: 1_500, in: directory)
        let sequential = try Self.decode(sealed, tuning: .sequential)
        guard case .entries(let entries, _, let boxCount) = sequential else {
            Issue.record("the sealed frame does not decode: \(sequential)")
            return
        }
        #expect(entries == sealed.encoded.map(EntrySummary.init), "the sequential loop gives what the encoder sealed")
        #expect(boxCount == sealed.encoded.reduce(0) { if case .put = $1 { $0 + 2 } else { $0 + 1 } })
        for tuning in Self.parallelTunings {
            #expect(try Self.decode(sealed, tuning: tuning) == sequential, "window \(tuning.windowSize)")
        }
    }

    @Test("Each put the windowed decoder hands on comes with the digests of its own id and attributes, each deletion with none")
    func windowedDecoderHandsOnEachPutsDigests() throws {
        let directory = TemporaryDirectory()
        // A deletion every seventh entry, so that a digest slot shifted by one would name another item.
        let sealed = try Self.sealFrame(count: 1_500, in: directory)
        for tuning in Self.parallelTunings {
            var entries: [DecodedEntry] = []
            var digests: [ItemDigests?] = []
            var piecesWithoutDigests = 0
            let problem: FrameProblem? = try withFrameBodyReader(
                overFrame: sealed.frame, writtenTo: sealed.path + ".copy", windowSize: tuning.windowSize
            ) { reader in
                ParallelTuning.$current.withValue(tuning) {
                    do throws(FrameProblem) {
                        _ = try RecordDecoder.decode(
                            &reader, expectedSequence: 1, previousChain: sealed.previousChain, context: sealed.context
                        ) { (piece, pieceDigests: [ItemDigests?]?, _) in
                            entries += piece
                            guard let pieceDigests else {
                                piecesWithoutDigests += 1
                                return
                            }
                            #expect(pieceDigests.count == piece.count)
                            digests += pieceDigests
                        }
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            #expect(problem == nil, "window \(tuning.windowSize)")
            #expect(piecesWithoutDigests == 0, "window \(tuning.windowSize): the windowed decoder computes every put's digests")
            #expect(entries.count == 1_500 && digests.count == 1_500, "window \(tuning.windowSize)")
            for (entry, digest) in zip(entries, digests) {
                switch entry {
                case .put(let id, let attributes, _):
                    #expect(digest == ItemDigests(id: id, attributes: attributes), "window \(tuning.windowSize), item \(id)")
                case .delete:
                    #expect(digest == nil, "window \(tuning.windowSize)")
                }
            }
        }
    }

    @Test("Any damaged byte of a large transaction, or two, gives the problem the sequential loop gives")
    func damageGivesSequentialProblem() throws {
        let directory = TemporaryDirectory()
        let sealed = try Self.sealFrame(count: 400, in: directory)
        var generator = TestRandom(seed: 0x5EED_0F_0BE2)
        var damages: [[Int]] = []
        // Single bytes spread over the body (entry kinds, lengths, nonces, ciphertexts, tags), then pairs.
        let body = Format.frameHeaderSize..<sealed.frame.count
        for _ in 0..<120 { damages.append([Int.random(in: body, using: &generator)]) }
        while damages.count < 160 {
            let pair = [Int.random(in: body, using: &generator), Int.random(in: body, using: &generator)]
            if pair[0] != pair[1] { damages.append(pair) }
        }
        var failures = 0
        for positions in damages {
            var damaged = sealed.frame
            for position in positions { damaged[position] ^= UInt8.random(in: 1...255, using: &generator) }
            let sequential = try Self.decode(sealed, bytes: damaged, tuning: .sequential)
            if case .problem = sequential { failures += 1 }
            for tuning in Self.parallelTunings {
                let parallel = try Self.decode(sealed, bytes: damaged, tuning: tuning)
                #expect(parallel == sequential, "damage at \(positions), window \(tuning.windowSize)")
            }
        }
        #expect(failures == damages.count, "every damaged frame fails")
    }

    @Test("An authentic entry that does not decode is the same semantic problem, before later damage")
    func semanticProblemIsKept() throws {
        let directory = TemporaryDirectory()
        let sealed = try Self.sealFrame(count: 600, invalid: [250], in: directory)
        let boxes = transactionBoxes(sealed.frame, frame: 0..<sealed.frame.count)
        var damaged = sealed.frame
        damaged[boxes[400].boxes[0].lowerBound + 20] ^= 0x40  // a later box that does not authenticate
        for bytes in [sealed.frame, damaged] {
            let sequential = try Self.decode(sealed, bytes: bytes, tuning: .sequential)
            #expect(sequential.problemOffset == boxes[250].boxes[0].lowerBound)
            guard case .problem(_, _, true) = sequential else {
                Issue.record("not a semantic problem: \(sequential)")
                continue
            }
            for tuning in Self.parallelTunings {
                #expect(try Self.decode(sealed, bytes: bytes, tuning: tuning) == sequential, "window \(tuning.windowSize)")
            }
        }
    }

    // MARK: - Opening a keychain

    /// A keychain with a large batch (puts, then updates and deletions in a second batch) and one small
    /// record after them, so that damage to the batches is not a torn tail.
    static func makeKeychain(in directory: TemporaryDirectory, items: Int) throws -> Keychain {
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        keychain.autoCompaction = .disabled
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<items {
                let secret = (0..<((index * 53) % 457)).map { UInt8(truncatingIfNeeded: $0 ^ index) }
                try batch.add(GenericPassword(service: "s\(index % 11)", account: "a\(index)").attributes, secret: secret)
            }
        }
        try keychain.batch { (batch) throws(KeychainError) in
            for index in stride(from: 0, to: items, by: 5) {
                try batch.delete(.genericPassword(service: "s\(index % 11)", account: "a\(index)"))
            }
            for index in stride(from: 1, to: items, by: 3) where index % 5 != 0 {
                try batch.update(.genericPassword(service: "s\(index % 11)", account: "a\(index)"), setting: [.label: .string("l\(index)")])
            }
        }
        try keychain.add(GenericPassword(service: "small", account: "last").attributes, secret: Array("x".utf8))
        return keychain
    }

    /// What an open gave: the items with their secrets, statistics, head and torn tail, and the order of a
    /// query's results; or the error, with its offset and reason (which `KeychainError`'s `==` ignores).
    struct OpenResult: Equatable {
        var snapshot: KeychainSnapshot? = nil
        var statistics: KeychainStatistics? = nil
        var head: Head? = nil
        var tornTail: TornTail? = nil
        var accounts: [String] = []
        var error: KeychainError? = nil
        var corruption: (offset: Int, reason: String)? {
            if case .corrupted(let offset, let reason) = error { return (offset, reason) }
            return nil
        }

        static func == (lhs: OpenResult, rhs: OpenResult) -> Bool {
            lhs.snapshot == rhs.snapshot && lhs.statistics == rhs.statistics && lhs.head == rhs.head && lhs.tornTail == rhs.tornTail
                && lhs.accounts == rhs.accounts && lhs.error == rhs.error && lhs.corruption?.offset == rhs.corruption?.offset
                && lhs.corruption?.reason == rhs.corruption?.reason
        }
    }

    static func open(_ path: String, tuning: ParallelTuning) throws -> OpenResult {
        let keychain: Keychain
        do {
            keychain = try ParallelTuning.$current.withValue(tuning) { try Keychain.open(at: path, credential: TestKeychain.password) }
        } catch let error as KeychainError {
            return OpenResult(error: error)
        }
        var accounts: [String] = []
        do throws(KeychainError) {
            accounts = try keychain.find(GenericPassword.self, matching: .genericPassword(service: "s4")).map(\.account)
        } catch {
            guard error == .itemNotFound else { throw error }
        }
        return OpenResult(
            snapshot: try KeychainSnapshot(keychain), statistics: try keychain.statistics(), head: keychain.head,
            tornTail: keychain.tornTail, accounts: accounts)
    }

    @Test("Opening a keychain with large batches in parallel gives what a sequential open gives")
    func parallelOpenEqualsSequential() throws {
        let directory = TemporaryDirectory()
        let keychain = try Self.makeKeychain(in: directory, items: 4_000)
        let sequential = try Self.open(keychain.path, tuning: .sequential)
        #expect(sequential.error == nil)
        #expect(sequential.snapshot == (try KeychainSnapshot(keychain)), "the sequential open gives what was written")
        #expect(sequential.statistics == (try keychain.statistics()))
        #expect(sequential.snapshot?.items.count == 4_000 - 800 + 1)
        for tuning in Self.parallelTunings.dropFirst() + [.automatic] {
            #expect(try Self.open(keychain.path, tuning: tuning) == sequential, "window \(tuning.windowSize)")
        }
    }

    @Test("Damaged boxes of a large batch are corrupted at the first of them, in parallel as sequentially")
    func damagedLargeBatch() throws {
        let directory = TemporaryDirectory()
        let keychain = try Self.makeKeychain(in: directory, items: 3_000)
        let bytes = try fileBytes(keychain.path)
        let records = recordOffsets(of: bytes)
        #expect(records.count == 3)
        let entries = transactionBoxes(bytes, frame: records[0])
        #expect(entries.count == 3_000)
        let path = directory.file("damaged.kcf")

        // (file changes, offset the error must name)
        let attributesInMiddle = entries[1_500].boxes[0]
        let secretNearEnd = entries[2_950].boxes[1]
        let earlyAttributes = entries[300].boxes[0]
        let lengthField = entries[1_250].boxes[1].lowerBound - 4
        // A box length of 5, too short for a box.
        let shortLength: [(position: Int, value: UInt8?)] = [(lengthField, 0), (lengthField + 1, 0), (lengthField + 2, 0), (lengthField + 3, 5)]
        let cases: [(name: String, damage: [(position: Int, value: UInt8?)], offset: Int)] = [
            ("attributes box in the middle", [(attributesInMiddle.lowerBound + 40, nil)], attributesInMiddle.lowerBound),
            ("secret box near the end", [(secretNearEnd.upperBound - 3, nil)], secretNearEnd.lowerBound),
            ("a late box and an early one", [(secretNearEnd.lowerBound + 20, nil), (earlyAttributes.lowerBound + 30, nil)],
             earlyAttributes.lowerBound),
            // A box that does not authenticate, then a length too short for a box: the box comes first.
            ("a box, then a bad length", [(entries[1_200].boxes[0].lowerBound + 30, nil)] + shortLength, entries[1_200].boxes[0].lowerBound),
            ("a bad length alone", shortLength, lengthField),
        ]
        for (name, damage, offset) in cases {
            var damaged = bytes
            // `nil`: flip a bit of the byte.
            for (position, value) in damage { damaged[position] = value ?? (damaged[position] ^ 0x10) }
            try writeFileBytes(damaged, to: path)
            let sequential = try Self.open(path, tuning: .sequential)
            guard let corruption = sequential.corruption else {
                Issue.record("\(name): not corrupted: \(sequential)")
                continue
            }
            #expect(corruption.offset == offset, "\(name)")
            for tuning in Self.parallelTunings.dropFirst() + [.automatic] {
                let parallel = try Self.open(path, tuning: tuning)
                #expect(parallel == sequential, "\(name), window \(tuning.windowSize): \(parallel.error.map { "\($0)" } ?? "no error")")
            }
        }

        // As the final record, the same damage is a torn tail, and the keychain holds what came before it.
        var final = Array(bytes[0..<records[0].upperBound])
        final[secretNearEnd.upperBound - 3] ^= 0x10
        try writeFileBytes(final, to: path)
        for tuning in [ParallelTuning.sequential] + Self.parallelTunings.dropFirst() + [.automatic] {
            let opened = try Self.open(path, tuning: tuning)
            #expect(opened.error == nil, "window \(tuning.windowSize)")
            #expect(opened.tornTail?.offset == records[0].lowerBound, "window \(tuning.windowSize)")
            #expect(opened.snapshot?.items.isEmpty == true, "window \(tuning.windowSize)")
        }
    }
}

extension ParallelReplayTests.DecodeResult {
    var problemOffset: Int? {
        if case .problem(let offset, _, _) = self { return offset }
        return nil
    }
}

/// The entries of a transaction frame at `frame` in `bytes`, read from its clear lengths (SPEC.md §7.1):
/// each entry's kind and the file ranges of its boxes (after their length fields).
func transactionBoxes(_ bytes: [UInt8], frame: Range<Int>) -> [(kind: UInt8, boxes: [Range<Int>])] {
    func u32(_ at: Int) -> Int { Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]) }
    var offset = frame.lowerBound + 17
    let count = u32(offset)
    offset += 4
    var entries: [(kind: UInt8, boxes: [Range<Int>])] = []
    for _ in 0..<count {
        let kind = bytes[offset]
        offset += 1
        var boxes: [Range<Int>] = []
        for _ in 0..<(kind == 1 ? 2 : 1) {
            let length = u32(offset)
            boxes.append((offset + 4)..<(offset + 4 + length))
            offset += 4 + length
        }
        entries.append((kind, boxes))
    }
    return entries
}
