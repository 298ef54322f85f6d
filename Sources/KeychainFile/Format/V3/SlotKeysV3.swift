@_spi(KeychainFileInternals) import KeychainCrypto

/// The keys a version 3 key slot derives (Docs/FormatVersion3.md §2.2): every one an HKDF-SHA256 output (empty
/// salt, 32 bytes) of a credential's key-encryption key (KEK) or of the root key, under its own label, so that no
/// key serves two primitives. Every label names the file, and those of one slot name the slot too.
enum SlotKeysV3 {
    static let commitmentLabel = Array("KCF3 slot commitment".utf8)
    static let anchorLabel = Array("KCF3 slot anchor".utf8)
    static let grantLabel = Array("KCF3 slot grant".utf8)
    static let attestationLabel = Array("KCF3 slot attestation".utf8)
    static let rootAgreementLabel = Array("KCF3 root agreement".utf8)
    static let rawKeyLabel = Array("KCF3 raw-key slot".utf8)

    /// HKDF(KEK, "KCF3 slot commitment" ‖ file id ‖ slot id): public, and committing to the KEK.
    static func commitment(kek: SymmetricKey, fileID: [UInt8], slotID: [UInt8]) throws(KeychainError) -> [UInt8] {
        try checkIDs(fileID, slotID)
        return try derive(kek, commitmentLabel + fileID + slotID).withUnsafeBytes { Array($0) }
    }

    /// HKDF(KEK, "KCF3 slot anchor" ‖ file id ‖ slot id): the AES-256-GCM key of the slot's anchor.
    static func anchorKey(kek: SymmetricKey, fileID: [UInt8], slotID: [UInt8]) throws(KeychainError) -> SymmetricKey {
        try checkIDs(fileID, slotID)
        return try derive(kek, anchorLabel + fileID + slotID)
    }

    /// HKDF(R, "KCF3 slot attestation" ‖ file id): the HMAC-SHA256 key of every slot's attestation.
    static func attestationKey(root: SymmetricKey, fileID: [UInt8]) throws(KeychainError) -> SymmetricKey {
        try checkIDs(fileID)
        return try derive(root, attestationLabel + fileID)
    }

    /// HKDF(R, "KCF3 root agreement" ‖ file id): the X25519 private key `r` of a root key, with which only a holder
    /// of that root can make a grant that a slot trusting it accepts.
    static func rootAgreementPrivateKey(root: SymmetricKey, fileID: [UInt8]) throws(KeychainError) -> SymmetricKey {
        try checkIDs(fileID)
        return try derive(root, rootAgreementLabel + fileID)
    }

    /// `ρ = X25519(r, 9)`: the root's public agreement key, which anchors and grants carry.
    static func rootAgreementPublicKey(root: SymmetricKey, fileID: [UInt8]) throws(KeychainError) -> [UInt8] {
        try publicKey(for: try rootAgreementPrivateKey(root: root, fileID: fileID))
    }

    /// The key of grant `number` of a slot: HKDF-SHA256 with input `X25519(e, P) ‖ X25519(r, P)` (computed by the
    /// slot's holder as `X25519(x, E) ‖ X25519(x, ρ)`), salt `E ‖ P`, info "KCF3 slot grant" ‖ file id ‖ slot id ‖
    /// number.
    static func grantKey(
        ephemeralSecret: SymmetricKey, rootSecret: SymmetricKey, ephemeralPublicKey: [UInt8], slotPublicKey: [UInt8],
        fileID: [UInt8], slotID: [UInt8], number: UInt8
    ) throws(KeychainError) -> SymmetricKey {
        try checkIDs(fileID, slotID)
        var bytes = [UInt8]()
        bytes.reserveCapacity(64)
        ephemeralSecret.withUnsafeBytes { bytes.append(contentsOf: $0) }
        rootSecret.withUnsafeBytes { bytes.append(contentsOf: $0) }
        defer { bytes.withUnsafeMutableBytes { secureWipe($0) } }
        let input = SymmetricKey(data: bytes)
        do {
            return try HKDF<SHA256>.deriveKey(
                inputKeyMaterial: input, salt: ephemeralPublicKey + slotPublicKey,
                info: grantLabel + fileID + slotID + [number], outputByteCount: 32)
        } catch {
            throw .invalidParameter("HKDF: \(error)")
        }
    }

    /// X25519(private, 9).
    static func publicKey(for privateKey: SymmetricKey) throws(KeychainError) -> [UInt8] {
        do {
            return try X25519.publicKey(for: privateKey)
        } catch {
            throw .invalidParameter("X25519: \(error)")
        }
    }

    /// X25519(private, peer), refusing a peer key of small order (an all-zero secret) as `nil`.
    static func sharedSecret(_ privateKey: SymmetricKey, _ peer: [UInt8]) -> SymmetricKey? {
        try? X25519.sharedSecret(privateKey: privateKey, peerPublicKey: peer)
    }

    /// Refuses a file id or slot id that is not 16 bytes: the labels rely on it to keep their inputs apart.
    private static func checkIDs(_ fileID: [UInt8], _ slotID: [UInt8] = [UInt8](repeating: 0, count: 16)) throws(KeychainError) {
        guard fileID.count == 16, slotID.count == 16 else { throw .invalidParameter("a file id and a slot id are 16 bytes each") }
    }

    private static func derive(_ key: SymmetricKey, _ info: [UInt8]) throws(KeychainError) -> SymmetricKey {
        // Every label is followed by a 16-byte file id (and a 16-byte slot id), so no two inputs run together.
        guard key.bitCount == 256 else { throw .invalidParameter("a slot's keys derive from 32 bytes, not \(key.bitCount / 8)") }
        do {
            return try HKDF<SHA256>.deriveKey(inputKeyMaterial: key, salt: [UInt8](), info: info, outputByteCount: 32)
        } catch {
            throw .invalidParameter("HKDF: \(error)")
        }
    }
}
