@_spi(KeychainFileInternals) import KeychainCrypto

/// The keys of one epoch of a version 3 file (Docs/FormatVersion3.md §2.9), each HKDF-SHA256 of the log key
/// `K_log` — which every credential holds, full or scoped — with the epoch salt, info label ‖ file id ‖ u64 epoch:
/// what keys the log's order and completeness, never content (group keys do that).
///
/// ```swift
/// let keys = try LogKeysV3(logKey: kLog, fileID: id, epoch: 1, epochSalt: salt)
/// keys.header     // the header MAC, the seals, C0
/// ```
struct LogKeysV3: Sendable {
    /// "KCF3 header": the header's MAC, the commit slots' seals and C0.
    let header: SymmetricKey
    /// "KCF3 chain": the record chain's tags.
    let chain: SymmetricKey
    /// "KCF3 heads": the heads segment of every commit.
    let heads: SymmetricKey

    static let headerLabel = Array("KCF3 header".utf8)
    static let chainLabel = Array("KCF3 chain".utf8)
    static let headsLabel = Array("KCF3 heads".utf8)

    /// - Throws: `.invalidParameter` when the log key is not 32 bytes, the file id not 16 or the salt not 32.
    init(logKey: SymmetricKey, fileID: [UInt8], epoch: UInt64, epochSalt: [UInt8]) throws(KeychainError) {
        guard logKey.bitCount == 256, fileID.count == 16, epochSalt.count == 32 else {
            throw .invalidParameter("an epoch's keys come from a 32-byte log key, a 16-byte file id and a 32-byte salt")
        }
        var epochBytes = ByteWriter(capacity: 8)
        epochBytes.writeUInt64(epoch)
        func derive(_ label: [UInt8]) throws(KeychainError) -> SymmetricKey {
            do {
                return try HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: logKey, salt: epochSalt, info: label + fileID + epochBytes.bytes, outputByteCount: 32)
            } catch {
                throw .invalidParameter("HKDF: \(error)")
            }
        }
        header = try derive(Self.headerLabel)
        chain = try derive(Self.chainLabel)
        heads = try derive(Self.headsLabel)
    }
}
