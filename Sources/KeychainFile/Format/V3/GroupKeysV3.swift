@_spi(KeychainFileInternals) import KeychainCrypto

/// The keys of one access group's records in format version 3 (Docs/FormatVersion3.md §2.5.1), derived from its
/// group key `K_g` for key id `k`, each with HKDF-SHA256 (empty salt, 32 bytes) under its own label:
///
/// - page key: `HKDF(K_g, "KCF3 group page" ‖ file id ‖ u8 k)`, the AES-256-GCM key of the group's pages;
/// - secret key: `HKDF(K_g, "KCF3 group secret" ‖ file id ‖ u8 k)`, of its secret boxes;
/// - start key: `HKDF(K_g, "KCF3 group start" ‖ file id ‖ u8 k)`, the HMAC-SHA256 key of its chain's start value.
///
/// The key id is in every label so that a group's key opens nothing under another key id (slots and grants name
/// groups by key id, §2.2). None of these changes with the epoch: a rewrite by a holder without `K_g` copies the
/// group's segments byte for byte and they still open.
///
/// ```swift
/// let keys = try GroupKeysV3(groupKey: kB, fileID: fileID, keyID: 2)
/// let c = keys.startValue(epoch: 7)   // the previous tag of the group's page 1 when its chain began in epoch 7
/// ```
struct GroupKeysV3: Sendable {
    let keyID: UInt8
    let fileID: [UInt8]
    let pageKey: SymmetricKey
    let secretKey: SymmetricKey
    let startKey: SymmetricKey

    static let pageLabel = Array("KCF3 group page".utf8)
    static let secretLabel = Array("KCF3 group secret".utf8)
    static let startLabel = Array("KCF3 group start".utf8)

    /// Derives the keys of key id `keyID` from `groupKey`.
    ///
    /// - Parameters:
    ///   - groupKey: the group key `K_g`, 32 bytes.
    ///   - fileID: the file id, 16 bytes.
    ///   - keyID: 1 … 255 (0 names the heads, which are under the log key).
    /// - Throws: `.invalidParameter` for a key, file id or key id out of those bounds.
    init(groupKey: SymmetricKey, fileID: [UInt8], keyID: UInt8) throws(KeychainError) {
        guard groupKey.bitCount == 256 else { throw .invalidParameter("a group key is 32 bytes, not \(groupKey.bitCount / 8)") }
        guard fileID.count == 16 else { throw .invalidParameter("a file id is 16 bytes, not \(fileID.count)") }
        guard keyID != 0 else { throw .invalidParameter("key id 0 is the heads' (under the log key), not a group's") }
        self.keyID = keyID
        self.fileID = fileID
        pageKey = try Self.derive(groupKey, Self.pageLabel + fileID + [keyID])
        secretKey = try Self.derive(groupKey, Self.secretLabel + fileID + [keyID])
        startKey = try Self.derive(groupKey, Self.startLabel + fileID + [keyID])
    }

    /// The group chain's start value for a chain that began in `epoch`: `HMAC-SHA256(start key, u64 epoch)[0 ..< 16]`,
    /// the previous page tag of the group's page 1. Only a holder of `K_g` can make it, so a writer without it cannot
    /// start the group's chain anew under pages of its choosing.
    func startValue(epoch: UInt64) -> [UInt8] {
        var message = ByteWriter(capacity: 8)
        message.writeUInt64(epoch)
        return Array(HMAC<SHA256>.authenticationCode(for: message.bytes, using: startKey).prefix(16))
    }

    private static func derive(_ key: SymmetricKey, _ info: [UInt8]) throws(KeychainError) -> SymmetricKey {
        do {
            return try HKDF<SHA256>.deriveKey(inputKeyMaterial: key, salt: [UInt8](), info: info, outputByteCount: 32)
        } catch {
            throw .invalidParameter("HKDF: \(error)")
        }
    }
}
