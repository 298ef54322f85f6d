@testable import KeychainCrypto
@testable import KeychainFile

/// Writes keychain files whose header is fixed and whose records are sealed, authentically, around any
/// plaintext the fuzzer chooses — including attribute plaintexts and deletion ids the library's own
/// encoder would never produce. The header has a password slot with one PBKDF2 iteration and a raw-key
/// slot, so that both kinds of credential open it cheaply.
struct FuzzFileWriter {
    /// The header and the record context, made once: key slots cost a PBKDF2 each.
    static let base: (header: [UInt8], context: RecordContext) = {
        var random = FuzzRandom(seed: 0x4845_4144)
        let masterKey = SymmetricKey(data: [UInt8](repeating: 0x6D, count: 32))
        let fileID = [UInt8](repeating: 0x1D, count: 16)
        let epochSalt = [UInt8](repeating: 0x5A, count: 32)
        do {
            let slots = try RecordLog.makeSlots(
                for: [FuzzCredentials.password, FuzzCredentials.key], masterKey: masterKey, fileID: fileID,
                iterations: .insecureForTesting(1), using: &random)
            let header = FileHeader(fileID: fileID, epoch: 1, epochSalt: epochSalt, slots: slots)
            let keys = try EpochKeys(masterKey: masterKey, fileID: fileID, epoch: 1, epochSalt: epochSalt)
            return (header.encode(headerKey: keys.header), RecordContext(fileID: fileID, epoch: 1, recordKey: keys.record))
        } catch {
            fatalError("the fuzz header cannot be made: \(error)")
        }
    }()

    /// One entry of a record, with its plaintexts exactly as they are to be sealed.
    enum Entry {
        /// `itemID` goes into the secret box's AAD; a reader takes it from the attributes plaintext.
        case put(attributes: [UInt8], itemID: ItemID, secret: [UInt8])
        /// The deletion box's plaintext: normally a 16-byte item id.
        case delete(plaintext: [UInt8])
    }

    private(set) var bytes: [UInt8] = Self.base.header
    /// Where each record ends, starting with the end of the header.
    private(set) var recordEnds: [Int] = [Self.base.header.count]
    private var sequence: UInt64 = 0
    private var chain: [UInt8] = FileHeader.initialChainValue(of: Self.base.header)
    private var random = FuzzRandom(seed: 0x5245_4344)

    /// Appends one record; `asTransaction` writes a single entry as a transaction of one.
    mutating func append(_ entries: [Entry], asTransaction: Bool) {
        guard !entries.isEmpty else { return }
        sequence += 1
        let kind: RecordKind
        switch entries.count > 1 || asTransaction ? nil : entries[0] {
        case nil: kind = .transaction
        case .put?: kind = .put
        case .delete?: kind = .delete
        }
        let context = Self.base.context
        let entryCount = UInt32(entries.count)
        var writer = ByteWriter(capacity: 64)
        writer.writeUInt32(0)
        writer.writeUInt32(0)
        writer.writeUInt8(kind.rawValue)
        writer.writeUInt64(sequence)
        if kind == .transaction { writer.writeUInt32(entryCount) }
        for (index, entry) in entries.enumerated() {
            func aad(_ role: BoxRole, _ itemID: ItemID?) -> [UInt8] {
                BoxAAD.make(
                    fileID: context.fileID, epoch: context.epoch, sequence: sequence, kind: kind, entryCount: entryCount,
                    entryIndex: UInt32(index), role: role, itemID: itemID, previousChain: chain)
            }
            switch entry {
            case .put(let attributes, let itemID, let secret):
                if kind == .transaction { writer.writeUInt8(1) }
                writeBox(seal(attributes, aad(.attributes, nil)), to: &writer)
                writeBox(seal(secret, aad(.secret, itemID)), to: &writer)
            case .delete(let plaintext):
                if kind == .transaction { writer.writeUInt8(2) }
                writeBox(seal(plaintext, aad(.deletion, nil)), to: &writer)
            }
        }
        let bodyLength = UInt32(writer.count - Format.frameHeaderSize)
        writer.setUInt32(bodyLength, at: 0)
        writer.setUInt32(bodyLength ^ 0xFFFF_FFFF, at: 4)
        bytes += writer.bytes
        recordEnds.append(bytes.count)
    }

    /// Appends bytes that are not a record (a torn or garbage tail).
    mutating func appendRaw(_ tail: [UInt8]) { bytes += tail }

    /// Flips bits of one byte of the finished file.
    mutating func flip(at position: Int, mask: UInt8) {
        guard !bytes.isEmpty else { return }
        bytes[position % bytes.count] ^= mask
    }

    /// Seals `plaintext` as a box (nonce ‖ ciphertext ‖ tag) and moves the chain on to its tag.
    private mutating func seal(_ plaintext: [UInt8], _ aad: [UInt8]) -> [UInt8] {
        do {
            let box = try AES.GCM.seal(plaintext, using: Self.base.context.recordKey, nonce: AES.GCM.Nonce(using: &random), authenticating: aad)
            chain = box.tag
            return Array(box.nonce) + box.ciphertext + box.tag
        } catch {
            fatalError("sealing a fuzz box failed: \(error)")
        }
    }

    private func writeBox(_ box: [UInt8], to writer: inout ByteWriter) {
        writer.writeUInt32(UInt32(box.count))
        writer.writeBytes(box)
    }
}
