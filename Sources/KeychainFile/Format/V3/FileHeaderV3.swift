@_spi(KeychainFileInternals) import KeychainCrypto

/// The header of a format version 3 file (Docs/FormatVersion3.md §2.9): version 2's fields, then the sealed key
/// table and the public-key slots, closed by an HMAC under the epoch's header key — derived from the log key, which
/// every credential holds — and an unkeyed checksum over everything, MAC included. Two copies stand in the file,
/// each a run of 1 … 16 header pages (``HeaderRunV3``).
///
/// Layout, big-endian: magic (8) ‖ version u16 (3) ‖ flags u16 (0) ‖ header length u32 ‖ file id (16) ‖ epoch u64 ‖
/// epoch salt (32) ‖ rewrite end u64 ‖ rewrite head sequence u64 ‖ rewrite head chain value (16) ‖ tombstone
/// horizon in days u32 ‖ slot count u8 (1 … 16) ‖ chain start count u8 ‖ key table length u16 ‖ sealed key table
/// (``KeyTableV3``) ‖ chain start entries (``ChainStartV3``, 9 bytes each) ‖ slots (``KeySlotV3``) ‖ HMAC-SHA256(K_header, everything before) (32) ‖ checksum (the first 16
/// bytes of SHA-256 of everything before, MAC included).
struct FileHeaderV3: Sendable, Equatable {
    let fileID: [UInt8]
    let epoch: UInt64
    let epochSalt: [UInt8]
    /// The logical end of the records the last rewrite wrote: every record below it is acknowledged.
    let rewriteEnd: UInt64
    /// The sequence number and chain value after the last of them: 0 and C0 exactly when it wrote none.
    let rewriteHeadSequence: UInt64
    let rewriteHeadChain: [UInt8]
    let tombstoneHorizonDays: UInt32
    /// The key table as sealed: only a holder of the root key opens it; everyone else copies it.
    let sealedKeyTable: [UInt8]
    let slots: [KeySlotV3]
    /// The groups whose chains in this file began before ``epoch`` (a scoped rewrite's copied groups, §2.6), in
    /// strictly increasing key id; empty for a file written whole.
    var chainStarts: [ChainStartV3] = []

    static let version: UInt16 = 3
    static let fixedLength = 112
    static let trailerLength = 48
    /// The smallest sealed key table: nonce, two bytes of plaintext, tag.
    static let minimumKeyTableLength = 30
    static let minimumLength = fixedLength + minimumKeyTableLength + KeySlotV3.minimumLength + trailerLength
    /// What sixteen header pages hold: a writer refuses a header that would not fit.
    static let maximumLength = HeaderRunV3.maximumPages * HeaderPage.blockLength

    /// The encoded size.
    var length: Int {
        Self.fixedLength + sealedKeyTable.count + chainStarts.count * ChainStartV3.byteCount + slots.reduce(0) { $0 + $1.byteCount }
            + Self.trailerLength
    }

    /// The epoch in which group `keyID`'s chain in this file began: its chain start entry's, else this header's.
    func startEpoch(of keyID: UInt8) -> UInt64 {
        chainStarts.first { $0.keyID == keyID }?.startEpoch ?? epoch
    }

    /// This header with `slots` in place of its key slots, every other field kept.
    func replacingSlots(_ slots: [KeySlotV3]) -> FileHeaderV3 {
        FileHeaderV3(
            fileID: fileID, epoch: epoch, epochSalt: epochSalt, rewriteEnd: rewriteEnd, rewriteHeadSequence: rewriteHeadSequence,
            rewriteHeadChain: rewriteHeadChain, tombstoneHorizonDays: tombstoneHorizonDays, sealedKeyTable: sealedKeyTable, slots: slots,
            chainStarts: chainStarts)
    }

    /// The header's bytes with MAC and checksum, authenticated under `headerKey`.
    ///
    /// - Throws: `.limitReached` when the header would not fit sixteen header pages, or the key table 65,535 bytes;
    ///   `.invalidParameter` for a slot count outside 1 … 16, or chain start entries out of key id order, of key id 0,
    ///   or not before the epoch.
    func encode(headerKey: SymmetricKey) throws(KeychainError) -> [UInt8] {
        guard (1...Format.maximumSlots).contains(slots.count) else { throw .invalidParameter("a header holds 1 … 16 key slots, not \(slots.count)") }
        guard chainStarts.first.map({ $0.keyID > 0 }) ?? true, zip(chainStarts, chainStarts.dropFirst()).allSatisfy({ $0.keyID < $1.keyID }),
              chainStarts.allSatisfy({ $0.startEpoch < epoch }) else {
            throw .invalidParameter("internal error: chain start entries name key ids 1 … 255 in increasing order, each begun before epoch \(epoch)")
        }
        guard sealedKeyTable.count <= Int(UInt16.max), length <= Self.maximumLength else {
            throw .limitReached("the header would be \(length) bytes; sixteen header pages hold \(Self.maximumLength): remove a credential or an access group")
        }
        var writer = ByteWriter(capacity: length)
        writer.writeBytes(Format.magic)
        writer.writeUInt16(Self.version)
        writer.writeUInt16(0)
        writer.writeUInt32(UInt32(length))
        writer.writeBytes(fileID)
        writer.writeUInt64(epoch)
        writer.writeBytes(epochSalt)
        writer.writeUInt64(rewriteEnd)
        writer.writeUInt64(rewriteHeadSequence)
        writer.writeBytes(rewriteHeadChain)
        writer.writeUInt32(tombstoneHorizonDays)
        writer.writeUInt8(UInt8(slots.count))
        writer.writeUInt8(UInt8(chainStarts.count))
        writer.writeUInt16(UInt16(sealedKeyTable.count))
        writer.writeBytes(sealedKeyTable)
        for start in chainStarts {
            writer.writeUInt8(start.keyID)
            writer.writeUInt64(start.startEpoch)
        }
        for slot in slots { slot.encode(into: &writer) }
        writer.writeBytes(HMAC<SHA256>.authenticationCode(for: writer.bytes, using: headerKey))
        writer.writeBytes(SHA256.hash(data: writer.bytes).prefix(16))
        return writer.bytes
    }

    /// The header length the first 16 bytes of `bytes` declare, if they are a version 3 header's.
    static func declaredLength(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 16, Array(bytes[0..<8]) == Format.magic, bytes[8] == 0, bytes[9] == 3, bytes[10] == 0, bytes[11] == 0 else {
            return nil
        }
        let length = bytes[12..<16].reduce(0) { $0 << 8 | Int($1) }
        return (minimumLength...maximumLength).contains(length) ? length : nil
    }

    /// Parses and checks a whole header: structure, limits and checksum. The MAC is checked once a slot has given
    /// the log key (``verifyMAC(_:headerKey:)``). `fileOffset` is where the copy stands, for error offsets.
    static func parse(_ bytes: [UInt8], fileOffset: Int = 0) throws(KeychainError) -> FileHeaderV3 {
        guard let length = declaredLength(bytes), bytes.count == length else {
            throw .corrupted(offset: fileOffset, reason: "not a version 3 header (magic, version, flags or length)")
        }
        let checksumOffset = length - 16
        guard Array(SHA256.hash(data: bytes[0..<checksumOffset]).prefix(16)) == Array(bytes[checksumOffset..<length]) else {
            throw .corrupted(offset: fileOffset + checksumOffset, reason: "header checksum mismatch")
        }
        // Slots are read from the bytes before the MAC, so that none can run into it.
        let body = Array(bytes[0..<(length - trailerLength)])
        var reader = ByteReader(body, range: 16..<body.count)
        do {
            let fileID = try reader.readBytes(16, "file id")
            let epoch = try reader.readUInt64("epoch")
            let epochSalt = try reader.readBytes(32, "epoch salt")
            let rewriteEnd = try reader.readUInt64("rewrite end")
            let rewriteHeadSequence = try reader.readUInt64("rewrite head sequence")
            let rewriteHeadChain = try reader.readBytes(16, "rewrite head chain value")
            let horizon = try reader.readUInt32("tombstone horizon")
            let slotCount = Int(try reader.readUInt8("slot count"))
            guard (1...Format.maximumSlots).contains(slotCount) else {
                throw KeychainError.corrupted(offset: fileOffset + 108, reason: "slot count \(slotCount) is outside 1 … 16")
            }
            let startCount = Int(try reader.readUInt8("chain start count"))
            guard rewriteEnd <= UInt64(Int.max / 2) else {
                throw KeychainError.corrupted(offset: fileOffset + 72, reason: "rewrite end \(rewriteEnd) is beyond any file")
            }
            guard (rewriteEnd == 0) == (rewriteHeadSequence == 0) else {
                throw KeychainError.corrupted(
                    offset: fileOffset + 80,
                    reason: "rewrite head sequence \(rewriteHeadSequence) does not fit rewrite end \(rewriteEnd) (0 exactly when no records were written)")
            }
            guard FileHeaderV2.tombstoneHorizonRange.contains(horizon) else {
                throw KeychainError.corrupted(offset: fileOffset + 104, reason: "tombstone horizon of \(horizon) days is outside 1 … 36,525")
            }
            let tableLength = Int(try reader.readUInt16("key table length"))
            guard tableLength >= minimumKeyTableLength else {
                throw KeychainError.corrupted(offset: fileOffset + 110, reason: "the key table's length \(tableLength) is less than \(minimumKeyTableLength)")
            }
            let sealedKeyTable = try reader.readBytes(tableLength, "key table")
            // §2.6: the groups whose chains began before this epoch, in strictly increasing key id.
            var chainStarts: [ChainStartV3] = []
            for _ in 0..<startCount {
                let at = fileOffset + reader.offset
                let start = ChainStartV3(keyID: try reader.readUInt8("chain start key id"), startEpoch: try reader.readUInt64("chain start epoch"))
                guard start.keyID > (chainStarts.last?.keyID ?? 0) else {
                    throw KeychainError.corrupted(offset: at, reason: "chain start of key id \(start.keyID): key ids are not 1 … 255 in strictly increasing order")
                }
                guard start.startEpoch < epoch else {
                    throw KeychainError.corrupted(
                        offset: at, reason: "chain start of key id \(start.keyID): start epoch \(start.startEpoch) is not before the header's epoch \(epoch)")
                }
                chainStarts.append(start)
            }
            var slots: [KeySlotV3] = []
            for _ in 0..<slotCount {
                let slot = try KeySlotV3.parse(body, at: reader.offset, fileOffset: fileOffset)
                _ = try reader.readRange(slot.byteCount, "key slot")
                slots.append(slot)
            }
            guard reader.isAtEnd else {
                throw KeychainError.corrupted(offset: fileOffset + reader.offset, reason: "header length does not match its key table and key slots")
            }
            let slotsOffset = fixedLength + tableLength + startCount * ChainStartV3.byteCount
            guard Set(slots.map(\.slotID)).count == slots.count else {
                throw KeychainError.corrupted(offset: fileOffset + slotsOffset, reason: "two key slots have the same id")
            }
            let work = slots.reduce((iterations: UInt64(0), argon2KiB: UInt64(0))) { ($0.iterations + $1.kdf.work.iterations, $0.argon2KiB + $1.kdf.work.argon2KiB) }
            guard work.iterations <= Format.maximumTotalIterations else {
                throw KeychainError.corrupted(offset: fileOffset + slotsOffset, reason: "the password slots ask for \(work.iterations) PBKDF2 iterations together; the limit is 20,000,000")
            }
            guard work.argon2KiB <= UInt64(KDF.Argon2.maximumWorkKiB) else {
                throw KeychainError.corrupted(offset: fileOffset + slotsOffset, reason: "the Argon2id slots ask for \(work.argon2KiB) KiB × passes together; the limit is \(KDF.Argon2.maximumWorkKiB)")
            }
            return FileHeaderV3(
                fileID: fileID, epoch: epoch, epochSalt: epochSalt, rewriteEnd: rewriteEnd, rewriteHeadSequence: rewriteHeadSequence,
                rewriteHeadChain: rewriteHeadChain, tombstoneHorizonDays: horizon, sealedKeyTable: sealedKeyTable, slots: slots,
                chainStarts: chainStarts)
        } catch let error as KeychainError {
            throw error
        } catch let underflow as ByteReader.Underflow {
            throw .corrupted(offset: fileOffset + underflow.offset, reason: "header: truncated \(underflow.field)")
        } catch {
            throw .corrupted(offset: fileOffset, reason: "header: \(error)")
        }
    }

    /// Where slot `index` starts within the header.
    func slotOffset(_ index: Int) -> Int {
        Self.fixedLength + sealedKeyTable.count + chainStarts.count * ChainStartV3.byteCount + slots[..<index].reduce(0) { $0 + $1.byteCount }
    }

    /// Whether the MAC before the checksum at the end of `bytes` verifies under `headerKey`.
    static func verifyMAC(_ bytes: [UInt8], headerKey: SymmetricKey) -> Bool {
        let macOffset = bytes.count - trailerLength
        guard macOffset > 0 else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(
            bytes[macOffset..<(macOffset + 32)], authenticating: bytes[0..<macOffset], using: headerKey)
    }

    /// The epoch's keys, from the log key.
    func logKeys(logKey: SymmetricKey) throws(KeychainError) -> LogKeysV3 {
        try LogKeysV3(logKey: logKey, fileID: fileID, epoch: epoch, epochSalt: epochSalt)
    }

    /// C0 = HMAC-SHA256(K_header, "KCF3 C0" ‖ file id ‖ u64 epoch ‖ epoch salt)[0 ..< 16]: the chain value before
    /// the epoch's first record.
    func initialChainValue(headerKey: SymmetricKey) -> [UInt8] {
        var writer = ByteWriter(capacity: 64)
        writer.writeBytes(Self.initialChainLabel)
        writer.writeBytes(fileID)
        writer.writeUInt64(epoch)
        writer.writeBytes(epochSalt)
        return Array(HMAC<SHA256>.authenticationCode(for: writer.bytes, using: headerKey).prefix(16))
    }

    static let initialChainLabel = Array("KCF3 C0".utf8)
}
