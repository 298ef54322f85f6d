@_spi(KeychainFileInternals) import KeychainCrypto

/// The subkeys of one epoch (SPEC.md §6): the header key and the record key, each HKDF-SHA256 of the master
/// key with the epoch salt, under the labels of the file's format version.
struct EpochKeys: Sendable {
    let header: SymmetricKey
    let record: SymmetricKey

    init(
        masterKey: SymmetricKey, fileID: [UInt8], epoch: UInt64, epochSalt: [UInt8],
        headerLabel: [UInt8] = Format.headerKeyLabel, recordLabel: [UInt8] = Format.recordKeyLabel
    ) throws(KeychainError) {
        var epochBytes = ByteWriter(capacity: 8)
        epochBytes.writeUInt64(epoch)
        do {
            header = try HKDF<SHA256>.deriveKey(
                inputKeyMaterial: masterKey, salt: epochSalt, info: headerLabel + fileID + epochBytes.bytes,
                outputByteCount: 32)
            record = try HKDF<SHA256>.deriveKey(
                inputKeyMaterial: masterKey, salt: epochSalt, info: recordLabel + fileID + epochBytes.bytes,
                outputByteCount: 32)
        } catch {
            throw .invalidParameter("HKDF: \(error)")
        }
    }
}
