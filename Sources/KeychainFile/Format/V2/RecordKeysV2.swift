@_spi(KeychainFileInternals) import KeychainCrypto

/// What sealing and opening version 2 records needs: the file id and epoch (in every page's associated data),
/// the epoch's record key for pages, and the secret key, which does not change with the epoch so that a
/// rewrite copies secret boxes as they are (Docs/FormatVersion2.md §5).
struct RecordKeysV2: Sendable {
    let fileID: [UInt8]
    let epoch: UInt64
    let page: AES.GCM.PreparedKey
    let secret: AES.GCM.PreparedKey
    /// The keys the prepared ones came from, held so that their contexts live as long as these (a key's storage
    /// frees its context when the key goes).
    private let recordKey: SymmetricKey
    private let secretKey: SymmetricKey

    /// The secret key of key id 0: HKDF-SHA256(master key, no salt, "KCF2 secrets" ‖ file id).
    static func secretKey(masterKey: SymmetricKey, fileID: [UInt8]) throws(KeychainError) -> SymmetricKey {
        do {
            return try HKDF<SHA256>.deriveKey(inputKeyMaterial: masterKey, salt: [UInt8](), info: secretLabel + fileID, outputByteCount: 32)
        } catch {
            throw .invalidParameter("HKDF: \(error)")
        }
    }

    init(fileID: [UInt8], epoch: UInt64, recordKey: SymmetricKey, secretKey: SymmetricKey) throws(KeychainError) {
        self.fileID = fileID
        self.epoch = epoch
        self.recordKey = recordKey
        self.secretKey = secretKey
        do {
            page = try AES.GCM.PreparedKey(recordKey)
            // Every secret box's associated data begins with the same two blocks (BoxAADV2.secret): GHASH
            // starts after them.
            let prefix = BoxAADV2.secretLabel + fileID
            secret = try prefix.withUnsafeBytes { (prefix) throws(CryptoKitError) in
                try AES.GCM.PreparedKey(secretKey).sharingAssociatedDataPrefix(prefix)
            }
        } catch {
            throw .invalidParameter("record keys: \(error)")
        }
    }

    static let secretLabel = Array("KCF2 secrets".utf8)
}
