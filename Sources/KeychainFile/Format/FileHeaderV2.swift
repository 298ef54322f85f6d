@_spi(KeychainFileInternals) import KeychainCrypto

/// The header of a format version 2 file (Docs/FormatVersion2.md §4): identity, epoch, the end and head of
/// the records the last rewrite wrote, the tombstone horizon and the key slots, closed by an HMAC under the
/// epoch's header key and an unkeyed checksum over everything, MAC included. Two copies of it stand in the file,
/// each in a `HeaderPage` with its own parity.
///
/// Layout, big-endian: magic (8) ‖ version u16 (2) ‖ flags u16 (0) ‖ header length u32 ‖ file id (16) ‖
/// epoch u64 ‖ epoch salt (32) ‖ rewrite end u64 ‖ rewrite head sequence u64 ‖ rewrite head chain value (16) ‖
/// tombstone horizon in days u32 ‖ slot count u8 (1 … 16) ‖ reserved (3, zero) ‖ slots ‖ HMAC-SHA256(K_header,
/// everything before) (32) ‖ checksum (the first 16 bytes of SHA-256 of everything before, MAC included). So the
/// checksum alone tells whether every byte of a copy is as written, before any key is known: a copy that passes
/// it is used as read, and parity is asked only for one that fails.
struct FileHeaderV2: Sendable, Equatable {
    let fileID: [UInt8]
    let epoch: UInt64
    let epochSalt: [UInt8]
    /// The logical end of the records the last rewrite wrote: every record below it is acknowledged.
    let rewriteEnd: UInt64
    /// The sequence number and chain value after the last of them: 0 and C0 exactly when it wrote none (the
    /// sequence `parse` checks; C0, which needs the header key, `OpenedHeaderV2`).
    let rewriteHeadSequence: UInt64
    let rewriteHeadChain: [UInt8]
    /// How long a deletion's tombstone outlives it, in days (issue 32's merges need them), within
    /// `tombstoneHorizonRange`.
    let tombstoneHorizonDays: UInt32
    let slots: [HeaderKeySlot]

    static let version: UInt16 = 2
    static let fixedLength = 112
    static let trailerLength = 48
    static let minimumLength = fixedLength + 4 + 112 + trailerLength
    static let maximumLength = fixedLength + Format.maximumSlots * CommittedKeySlot.length + trailerLength
    static let defaultTombstoneHorizonDays: UInt32 = 90
    /// One day to a century: a tombstone kept for no time could not be merged, and the bound keeps every
    /// horizon in milliseconds far inside an `Int64`.
    static let tombstoneHorizonRange: ClosedRange<UInt32> = 1...36_525

    /// The encoded size: fixed part, slots, checksum and MAC.
    var length: Int { Self.fixedLength + slots.reduce(0) { $0 + $1.length } + Self.trailerLength }

    /// This header with `slots` in place of its key slots, every other field kept.
    func replacingSlots(_ slots: [HeaderKeySlot]) -> FileHeaderV2 {
        FileHeaderV2(
            fileID: fileID, epoch: epoch, epochSalt: epochSalt, rewriteEnd: rewriteEnd, rewriteHeadSequence: rewriteHeadSequence,
            rewriteHeadChain: rewriteHeadChain, tombstoneHorizonDays: tombstoneHorizonDays, slots: slots)
    }

    /// The header's bytes with checksum and MAC, authenticated under `headerKey`.
    func encode(headerKey: SymmetricKey) -> [UInt8] {
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
        writer.writeBytes([0, 0, 0])
        for slot in slots { slot.encode(into: &writer) }
        writer.writeBytes(HMAC<SHA256>.authenticationCode(for: writer.bytes, using: headerKey))
        writer.writeBytes(SHA256.hash(data: writer.bytes).prefix(16))
        return writer.bytes
    }

    /// The header length a copy's first 16 bytes declare, if they are a version 2 header's.
    static func declaredLength(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 16, Array(bytes[0..<8]) == Format.magic, bytes[8] == 0, bytes[9] == 2, bytes[10] == 0, bytes[11] == 0 else {
            return nil
        }
        let length = bytes[12..<16].reduce(0) { $0 << 8 | Int($1) }
        return (minimumLength...maximumLength).contains(length) ? length : nil
    }

    /// Parses and checks a whole header: structure, limits and checksum. The MAC is checked once the master
    /// key is known (`verifyMAC`). `fileOffset` is where the copy stands, for error offsets.
    static func parse(_ bytes: [UInt8], fileOffset: Int = 0) throws(KeychainError) -> FileHeaderV2 {
        guard let length = declaredLength(bytes), bytes.count == length else {
            throw .corrupted(offset: fileOffset, reason: "not a version 2 header (magic, version, flags or length)")
        }
        let checksumOffset = length - 16
        guard Array(SHA256.hash(data: bytes[0..<checksumOffset]).prefix(16)) == Array(bytes[checksumOffset..<length]) else {
            throw .corrupted(offset: fileOffset + checksumOffset, reason: "header checksum mismatch")
        }
        var reader = ByteReader(bytes, range: 16..<(length - trailerLength))
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
            guard try reader.readBytes(3, "reserved") == [0, 0, 0] else {
                throw KeychainError.corrupted(offset: fileOffset + 109, reason: "reserved header bytes are not zero")
            }
            guard rewriteEnd <= UInt64(Int.max / 2) else {
                throw KeychainError.corrupted(offset: fileOffset + 72, reason: "rewrite end \(rewriteEnd) is beyond any file")
            }
            // Records start at sequence 1: a rewrite that wrote none has head 0, one that wrote some a head ≥ 1.
            guard (rewriteEnd == 0) == (rewriteHeadSequence == 0) else {
                throw KeychainError.corrupted(
                    offset: fileOffset + 80,
                    reason: "rewrite head sequence \(rewriteHeadSequence) does not fit rewrite end \(rewriteEnd) (0 exactly when no records were written)")
            }
            guard tombstoneHorizonRange.contains(horizon) else {
                throw KeychainError.corrupted(offset: fileOffset + 104, reason: "tombstone horizon of \(horizon) days is outside 1 … 36,525")
            }
            var slots: [HeaderKeySlot] = []
            for _ in 0..<slotCount { slots.append(try HeaderKeySlot.parse(&reader, fileOffset: fileOffset)) }
            guard reader.isAtEnd else {
                throw KeychainError.corrupted(offset: fileOffset + reader.offset, reason: "header length does not match its key slots")
            }
            guard Set(slots.map(\.slotID)).count == slots.count else {
                throw KeychainError.corrupted(offset: fileOffset + fixedLength, reason: "two key slots have the same id")
            }
            let iterations = slots.reduce(UInt64(0)) { $0 + $1.work.iterations }
            guard iterations <= Format.maximumTotalIterations else {
                throw KeychainError.corrupted(offset: fileOffset + fixedLength, reason: "the password slots ask for \(iterations) PBKDF2 iterations together; the limit is 20,000,000")
            }
            let argon2 = slots.reduce(UInt64(0)) { $0 + $1.work.argon2KiB }
            guard argon2 <= UInt64(KDF.Argon2.maximumWorkKiB) else {
                throw KeychainError.corrupted(offset: fileOffset + fixedLength, reason: "the Argon2id slots ask for \(argon2) KiB × passes together; the limit is \(KDF.Argon2.maximumWorkKiB)")
            }
            return FileHeaderV2(
                fileID: fileID, epoch: epoch, epochSalt: epochSalt, rewriteEnd: rewriteEnd,
                rewriteHeadSequence: rewriteHeadSequence, rewriteHeadChain: rewriteHeadChain,
                tombstoneHorizonDays: horizon, slots: slots)
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
        Self.fixedLength + slots[..<index].reduce(0) { $0 + $1.length }
    }

    /// Whether the MAC before the checksum at the end of `bytes` verifies under `headerKey`.
    static func verifyMAC(_ bytes: [UInt8], headerKey: SymmetricKey) -> Bool {
        let macOffset = bytes.count - trailerLength
        guard macOffset > 0 else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(
            bytes[macOffset..<(macOffset + 32)], authenticating: bytes[0..<macOffset], using: headerKey)
    }

    /// The epoch's subkeys: HKDF-SHA256 of the master key with the epoch salt, under version 2's labels.
    func epochKeys(masterKey: SymmetricKey) throws(KeychainError) -> EpochKeys {
        try EpochKeys(
            masterKey: masterKey, fileID: fileID, epoch: epoch, epochSalt: epochSalt,
            headerLabel: Self.headerKeyLabel, recordLabel: Self.recordKeyLabel)
    }

    /// The initial chain value C0 = HMAC-SHA256(K_header, "KCF2 C0" ‖ file id ‖ u64 epoch ‖ epoch salt)[0 ..< 16].
    /// Not the header's MAC, as in version 1: the MAC covers the rewrite head, which is a chain value.
    func initialChainValue(headerKey: SymmetricKey) -> [UInt8] {
        var writer = ByteWriter(capacity: 64)
        writer.writeBytes(Self.initialChainLabel)
        writer.writeBytes(fileID)
        writer.writeUInt64(epoch)
        writer.writeBytes(epochSalt)
        return Array(HMAC<SHA256>.authenticationCode(for: writer.bytes, using: headerKey).prefix(16))
    }

    static let headerKeyLabel = Array("KCF2 header".utf8)
    static let recordKeyLabel = Array("KCF2 records".utf8)
    static let initialChainLabel = Array("KCF2 C0".utf8)
}
