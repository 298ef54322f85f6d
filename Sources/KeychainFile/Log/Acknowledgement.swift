import KeychainCrypto

/// How far a keychain file's log has been acknowledged: the head and end offset a writer reported as committed,
/// kept in the lock file after the change counter (SPEC.md §16.1) and made durable before the write returns.
///
/// A reader uses it to tell a damaged acknowledged record from what a crash left of an unacknowledged one
/// (SPEC.md §9.2): a final record that fails verification at or before `end` was acknowledged, so it is
/// damage, never a torn tail; one that starts exactly at `end` was never acknowledged and may be dropped.
/// It is authenticated with the epoch's header key, so only a holder of the master key can write one that a
/// reader accepts, and it names the file id and epoch it belongs to.
struct Acknowledgement: Equatable {
    let fileID: [UInt8]
    let epoch: UInt64
    /// The sequence number of the last acknowledged record (0: none in this epoch).
    let sequence: UInt64
    /// The offset just after the last acknowledged record (the header length when there is none).
    let end: Int
    /// The chain value after that record (`C0` when there is none).
    let chainValue: [UInt8]

    /// Where the block starts in the lock file: just after the 8-byte change counter.
    static let offset = 8
    /// The block's size: magic 4, file id 16, epoch 8, sequence 8, end 8, chain value 16, MAC 32.
    static let size = 92
    static let magic: [UInt8] = Array("KCFA".utf8)
    private static let macOffset = 60

    /// The acknowledgement of `head` ending at `end` in a file with this id.
    init(fileID: [UInt8], head: Head, end: Int) {
        self.fileID = fileID
        epoch = head.epoch
        sequence = head.sequence
        self.end = end
        chainValue = head.chainValue
    }

    /// The block's bytes, big-endian (SPEC.md §2), with the HMAC-SHA256 of the first 60 under `headerKey`.
    func encode(headerKey: SymmetricKey) -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        writer.writeBytes(Self.magic)
        writer.writeBytes(fileID)
        writer.writeUInt64(epoch)
        writer.writeUInt64(sequence)
        writer.writeUInt64(UInt64(end))
        writer.writeBytes(chainValue)
        let mac = HMAC<SHA256>.authenticationCode(for: writer.bytes, using: headerKey)
        writer.writeBytes(mac)
        return writer.bytes
    }

    /// Reads a block written by ``encode(headerKey:)``: `nil` unless `bytes` holds one whose MAC verifies under
    /// `headerKey` and which names `fileID` and `epoch` — anything else (no block, a lock file from before
    /// acknowledgements, another epoch, damage) says nothing about this file.
    static func read(_ bytes: [UInt8], fileID: [UInt8], epoch: UInt64, headerKey: SymmetricKey) -> Acknowledgement? {
        guard bytes.count >= size, Array(bytes[0..<4]) == magic else { return nil }
        let block = Array(bytes[0..<size])
        guard HMAC<SHA256>.isValidAuthenticationCode(block[macOffset...], authenticating: block[0..<macOffset], using: headerKey) else {
            return nil
        }
        var reader = ByteReader(block, range: 4..<macOffset)
        guard let id = try? reader.readBytes(16, "file id"), id == fileID,
              let blockEpoch = try? reader.readUInt64("epoch"), blockEpoch == epoch,
              let sequence = try? reader.readUInt64("sequence"),
              let end = try? reader.readUInt64("end"), end <= UInt64(Int.max),
              let chain = try? reader.readBytes(16, "chain value")
        else { return nil }
        return Acknowledgement(fileID: id, head: Head(epoch: blockEpoch, sequence: sequence, chainValue: chain), end: Int(end))
    }
}
