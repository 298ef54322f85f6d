@_spi(KeychainFileInternals) import KeychainCrypto

/// The file header (SPEC.md §4): identity, epoch and key slots, closed by a checksum and a MAC.
struct FileHeader: Sendable, Equatable {
    let fileID: [UInt8]
    let epoch: UInt64
    let epochSalt: [UInt8]
    let slots: [KeySlot]

    /// The encoded size: fixed part, slots, checksum and MAC.
    var length: Int { Format.fixedHeaderSize + slots.reduce(0) { $0 + $1.length } + Format.headerTrailerSize }

    /// The header's bytes with checksum and MAC, authenticated under `headerKey`.
    func encode(headerKey: SymmetricKey) -> [UInt8] {
        var writer = ByteWriter(capacity: length)
        writer.writeBytes(Format.magic)
        writer.writeUInt16(Format.version)
        writer.writeUInt16(0)
        writer.writeUInt32(UInt32(length))
        writer.writeBytes(fileID)
        writer.writeUInt64(epoch)
        writer.writeBytes(epochSalt)
        writer.writeUInt8(UInt8(slots.count))
        writer.writeBytes([0, 0, 0])
        for slot in slots { slot.encode(into: &writer) }
        writer.writeBytes(SHA256.hash(data: writer.bytes).prefix(16))
        let mac = HMAC<SHA256>.authenticationCode(for: writer.bytes, using: headerKey)
        writer.writeBytes(mac)
        return writer.bytes
    }

    /// The 16 bytes at the start of every keychain file, read before the rest (SPEC.md §9.1 step 1).
    struct Prefix {
        let version: UInt16
        let flags: UInt16
        let headerLength: Int

        static let size = 16

        /// - Throws: `.notAKeychain` for another magic number or a file shorter than 16 bytes,
        ///   `.unsupportedVersion`, or `.corrupted` for flags or a header length out of range.
        init(_ bytes: [UInt8]) throws(KeychainError) {
            guard bytes.count >= Prefix.size, Array(bytes[0..<8]) == Format.magic else { throw .notAKeychain }
            var reader = ByteReader(bytes, range: 8..<16)
            do {
                version = try reader.readUInt16("version")
                flags = try reader.readUInt16("flags")
                headerLength = Int(try reader.readUInt32("header length"))
            } catch {
                throw .notAKeychain
            }
            guard version == Format.version else { throw .unsupportedVersion(Int(version)) }
            guard flags == 0 else { throw .corrupted(offset: 10, reason: "unknown header flags 0x\(String(flags, radix: 16))") }
            guard headerLength >= Format.minimumHeaderSize, headerLength <= Format.maximumHeaderSize else {
                throw .corrupted(offset: 12, reason: "header length \(headerLength) is outside 236 … 1,980")
            }
        }
    }

    /// Parses and checks a whole header (SPEC.md §9.1 step 2): structure, limits and checksum. The MAC is
    /// checked separately, once the master key is known (`verifyMAC`).
    static func parse(_ bytes: [UInt8]) throws(KeychainError) -> FileHeader {
        let prefix = try Prefix(bytes)
        guard bytes.count == prefix.headerLength else {
            throw .corrupted(offset: 0, reason: "truncated header: \(bytes.count) of \(prefix.headerLength) bytes")
        }
        let checksumOffset = prefix.headerLength - Format.headerTrailerSize
        let checksum = SHA256.hash(data: bytes[0..<checksumOffset])
        guard Array(checksum.prefix(16)) == Array(bytes[checksumOffset..<(checksumOffset + 16)]) else {
            throw .corrupted(offset: checksumOffset, reason: "header checksum mismatch")
        }
        var reader = ByteReader(bytes, range: 16..<checksumOffset)
        do {
            let fileID = try reader.readBytes(16, "file id")
            let epoch = try reader.readUInt64("epoch")
            let epochSalt = try reader.readBytes(32, "epoch salt")
            let slotCount = Int(try reader.readUInt8("slot count"))
            guard slotCount >= 1, slotCount <= Format.maximumSlots else {
                throw KeychainError.corrupted(offset: 72, reason: "slot count \(slotCount) is outside 1 … 16")
            }
            guard try reader.readBytes(3, "reserved") == [0, 0, 0] else {
                throw KeychainError.corrupted(offset: 73, reason: "reserved header bytes are not zero")
            }
            var slots: [KeySlot] = []
            for _ in 0..<slotCount {
                slots.append(try KeySlot.parse(&reader, fileOffset: 0))
            }
            guard reader.isAtEnd else {
                throw KeychainError.corrupted(offset: reader.offset, reason: "header length does not match its key slots")
            }
            let totalIterations = slots.reduce(UInt64(0)) { $0 + UInt64($1.iterations) }
            guard totalIterations <= Format.maximumTotalIterations else {
                throw KeychainError.corrupted(offset: 76, reason: "the password slots ask for \(totalIterations) PBKDF2 iterations together; the limit is 20,000,000")
            }
            return FileHeader(fileID: fileID, epoch: epoch, epochSalt: epochSalt, slots: slots)
        } catch let error as KeychainError {
            throw error
        } catch let underflow as ByteReader.Underflow {
            throw .corrupted(offset: underflow.offset, reason: "header: truncated \(underflow.field)")
        } catch {
            throw .corrupted(offset: 0, reason: "header: \(error)")
        }
    }

    /// Whether the MAC at the end of `bytes` (this header, as read) verifies under `headerKey`.
    static func verifyMAC(_ bytes: [UInt8], headerKey: SymmetricKey) -> Bool {
        let macOffset = bytes.count - 32
        guard macOffset > 0 else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(bytes[macOffset...], authenticating: bytes[0..<macOffset], using: headerKey)
    }

    /// The initial chain value C0: the first 16 bytes of the header MAC (SPEC.md §6).
    static func initialChainValue(of bytes: [UInt8]) -> [UInt8] {
        Array(bytes[(bytes.count - 32)..<(bytes.count - 16)])
    }
}
