@_spi(KeychainFileInternals) import KeychainCrypto

/// The subkeys of one epoch (SPEC.md §6).
struct EpochKeys: Sendable {
    let header: SymmetricKey
    let record: SymmetricKey

    init(masterKey: SymmetricKey, fileID: [UInt8], epoch: UInt64, epochSalt: [UInt8]) throws(KeychainError) {
        var epochBytes = ByteWriter(capacity: 8)
        epochBytes.writeUInt64(epoch)
        do {
            header = try HKDF<SHA256>.deriveKey(
                inputKeyMaterial: masterKey, salt: epochSalt, info: Format.headerKeyLabel + fileID + epochBytes.bytes,
                outputByteCount: 32)
            record = try HKDF<SHA256>.deriveKey(
                inputKeyMaterial: masterKey, salt: epochSalt, info: Format.recordKeyLabel + fileID + epochBytes.bytes,
                outputByteCount: 32)
        } catch {
            throw .invalidParameter("HKDF: \(error)")
        }
    }
}
