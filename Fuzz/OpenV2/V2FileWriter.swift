import Foundation
@_spi(KeychainFileInternals) @testable import KeychainCrypto
@testable import KeychainFile

/// Writes version 2 keychain files whose records are sealed, authentically, around any entries the fuzzer
/// chooses — attribute plaintexts, deletion ids and times, secret lengths and digests the library's own encoder
/// would never write — and commits them through the file's commit slots as `Keychain` does (a transaction part
/// leaves the committed end where it was). The file starts as an empty keychain made by the library, with a
/// raw-key slot and a one-iteration password slot; a compaction through `Keychain` may come between records.
struct V2FileWriter {
    /// One entry of a record, with its plaintext exactly as it is to be sealed.
    enum Entry {
        /// `itemID` goes into the secret box's associated data; a reader takes the id from `attributes`. The
        /// page names `namedLength` as the secret's length (its real length if `nil`) and the box's digest
        /// (`RecordV2.secretBoxDigest`) with its first byte xor `digestMask`.
        case put(attributes: [UInt8], itemID: ItemID, secret: [UInt8], namedLength: UInt32?, digestMask: UInt8)
        /// A deletion (kind 2) or a tombstone (kind 3) of the item whose id is `id`, at `time` (ms since 1970).
        case deletion(kind: UInt8, id: [UInt8], time: Int64)

        /// The entry's bytes in its page.
        var pageByteCount: Int {
            switch self {
            case .put(let attributes, _, _, _, _): return 1 + 4 + attributes.count + 4 + RecordV2.secretBoxDigestSize
            case .deletion: return 1 + 16 + 8
            }
        }
    }

    /// An empty keychain, made once: its slots cost a key derivation each.
    static let base: [UInt8] = {
        let fileSystem = MemoryFileSystem()
        var random = FuzzRandom(seed: 0x5632_4241_5345)
        do {
            _ = try RecordLogV2.create(
                at: FuzzStore.path, credentials: [FuzzCredentials.key, FuzzCredentials.password],
                keyDerivation: .pbkdf2(.insecureForTesting(1)), fileSystem: fileSystem, clock: FuzzStore.clock, using: &random)
            let file = try fileSystem.openExisting(FuzzStore.path)
            defer { file.close() }
            return try file.readExactly(count: try file.size(), at: 0)
        } catch {
            fatalError("the empty version 2 keychain cannot be made: \(error)")
        }
    }()

    let store = FuzzStore(base)
    /// The file as it stood before each record was appended, and at the end.
    private(set) var snapshots: [[UInt8]] = []
    private var random = FuzzRandom(seed: 0x5632_5245_4344)
    private var keys: RecordKeysV2
    private var log: HealingLog
    /// The last record written (a part or a commit), and the last commit.
    private var head: Head
    private var committed: (head: Head, end: Int)

    init() {
        do {
            (keys, log, head, committed) = try Self.load(store)
        } catch {
            fatalError("the empty version 2 keychain does not open: \(error)")
        }
    }

    /// The keys, log, head and last commit of the file `store` holds, to go on appending to.
    private static func load(
        _ store: FuzzStore
    ) throws(KeychainError) -> (keys: RecordKeysV2, log: HealingLog, head: Head, committed: (head: Head, end: Int)) {
        let loaded = try RecordLogV2.load(
            file: try store.fileSystem.openExisting(FuzzStore.path), credential: FuzzCredentials.key, heldKey: nil, pin: nil)
        let head = loaded.state.replayed.head
        return (loaded.state.keys, loaded.state.log, head, (head, loaded.state.replayed.end))
    }

    /// The file's bytes now.
    var bytes: [UInt8] { store.bytes() }

    /// Notes the file as it stands, before the next record.
    mutating func snapshot() { snapshots.append(bytes) }

    /// Seals `entries` as one record of `kind`, part `part` (the one due if `nil`), with `sequenceSkew` added to
    /// the sequence number due, and appends it; a commit moves the committed end to its end. The frame check
    /// (Docs/FormatVersion2.md §5) is right, so that the reader gets past the scan to the boxes.
    mutating func append(_ entries: [Entry], kind: RecordV2.Kind, part: UInt32?, sequenceSkew: UInt64, pageVersion: UInt8) {
        guard !entries.isEmpty else { return }
        let sequence = head.sequence &+ 1 &+ sequenceSkew
        let duePart = head == committed.head ? 0 : UInt32(truncatingIfNeeded: head.sequence - committed.head.sequence)
        let part = part ?? duePart
        let pages = Self.paginate(entries)
        let boxCount = UInt32(pages.count + entries.filter { if case .put = $0 { return true } else { return false } }.count)
        // The boxes in order — each page's secrets, then the page — sealed before the frame, whose check covers
        // their fields' headers.
        var boxes: [(role: RecordV2.Role, box: [UInt8])] = []
        var chain = head.chainValue
        for page in pages {
            var plaintext = ByteWriter(capacity: RecordV2.pagePlaintextLimit)
            plaintext.writeUInt8(pageVersion)
            plaintext.writeUInt16(UInt16(page.count))
            for entry in entries[page] {
                switch entry {
                case .put(let attributes, let itemID, let secret, let namedLength, let digestMask):
                    let box = seal(secret, aad: BoxAADV2.secret(fileID: keys.fileID, keyID: 0, itemID: itemID), key: keys.secret)
                    boxes.append((.secret, box))
                    var digest = Array(RecordV2.secretBoxDigest(box))
                    digest[0] ^= digestMask
                    plaintext.writeUInt8(1)
                    plaintext.writeUInt32(UInt32(attributes.count))
                    plaintext.writeBytes(attributes)
                    plaintext.writeUInt32(namedLength ?? UInt32(secret.count))
                    plaintext.writeBytes(digest)
                case .deletion(let kind, let id, let time):
                    plaintext.writeUInt8(kind)
                    plaintext.writeBytes(id)
                    plaintext.writeUInt64(UInt64(bitPattern: time))
                }
            }
            let place = BoxAADV2.PagePlace(
                sequence: sequence, kind: kind.rawValue, part: part, entryCount: UInt32(entries.count), boxCount: boxCount,
                boxIndex: UInt32(boxes.count), keyID: 0)
            let box = seal(plaintext.bytes, aad: BoxAADV2.page(fileID: keys.fileID, epoch: keys.epoch, place: place, previousChain: chain), key: keys.page)
            boxes.append((.page, box))
            chain = Array(box.suffix(16))
        }
        var fields = ByteWriter(capacity: RecordV2.boxFieldHeaderSize * boxes.count)
        for (role, box) in boxes { Self.writeBoxFieldHeader(role: role, length: box.count, into: &fields) }
        let bodyLength = UInt32(RecordV2.fixedSize - 8 + fields.count + boxes.reduce(0) { $0 + $1.box.count })
        var out = ByteWriter(capacity: 8 + Int(bodyLength))
        out.writeUInt32(bodyLength)
        out.writeUInt32(bodyLength ^ 0xFFFF_FFFF)
        out.writeUInt8(kind.rawValue)
        out.writeUInt64(sequence)
        out.writeUInt32(part)
        out.writeUInt32(UInt32(entries.count))
        out.writeUInt32(boxCount)
        out.writeBytes(RecordV2.frameCheck(frame: out.bytes, boxFields: fields.bytes))
        for (role, box) in boxes {
            Self.writeBoxFieldHeader(role: role, length: box.count, into: &out)
            out.writeBytes(box)
        }
        let record = out.bytes
        let end = log.writtenEnd + record.count
        head = Head(epoch: keys.epoch, sequence: sequence, chainValue: chain)
        if kind == .commit { committed = (head, end) }
        do {
            try log.append(
                record, committedEnd: committed.end, headSequence: committed.head.sequence, headChain: committed.head.chainValue,
                flushBetween: kind != .commit)
        } catch {
            Invariant.check(false, "appending an authentic record to an undamaged log failed: \(error)")
        }
    }

    /// Compacts the file through `Keychain` and goes on from the rewritten file; leaves it as it is if it does
    /// not open or compact (its records may be ones no keychain applies).
    mutating func compact() {
        var opener = store
        guard let keychain = try? opener.open(with: FuzzCredentials.key), (try? keychain.compact()) != nil else { return }
        do {
            (keys, log, head, committed) = try Self.load(store)
        } catch {
            Invariant.check(false, "a compacted file does not open: \(error)")
        }
    }

    /// The entries of each page: as many as fit in 8 KiB of plaintext, and at least one.
    static func paginate(_ entries: [Entry]) -> [Range<Int>] {
        var pages: [Range<Int>] = []
        var start = 0
        var size = 3
        for (index, entry) in entries.enumerated() {
            if index > start, size + entry.pageByteCount > RecordV2.pagePlaintextLimit {
                pages.append(start..<index)
                start = index
                size = 3
            }
            size += entry.pageByteCount
        }
        pages.append(start..<entries.count)
        return pages
    }

    /// `u8 key id (0) ‖ u8 role ‖ u32 length`.
    private static func writeBoxFieldHeader(role: RecordV2.Role, length: Int, into out: inout ByteWriter) {
        out.writeUInt8(0)
        out.writeUInt8(role.rawValue)
        out.writeUInt32(UInt32(length))
    }

    /// A box: nonce ‖ ciphertext ‖ tag.
    private mutating func seal(_ plaintext: [UInt8], aad: [UInt8], key: AES.GCM.PreparedKey) -> [UInt8] {
        var box = [UInt8](repeating: 0, count: plaintext.count + 28)
        let nonce = AES.GCM.Nonce(using: &random)
        let sealed = plaintext.withUnsafeBytes { text in
            aad.withUnsafeBytes { aad in
                box.withUnsafeMutableBytes { out in
                    (try? AES.GCM.seal(text, using: key, nonce: nonce, authenticating: aad, into: out)) != nil
                }
            }
        }
        Invariant.check(sealed, "sealing a box of \(plaintext.count) bytes failed")
        return box
    }
}
