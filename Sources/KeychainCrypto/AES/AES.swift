/// The AES block cipher (FIPS 197) and its modes, implemented in constant time.
///
/// ``AES/GCM`` is the authenticated mode to use. The raw block functions ``permute(_:key:)`` and
/// ``inversePermute(_:key:)`` exist for known-answer tests and for building other modes; on their own
/// they are not a way to encrypt data.
public enum AES: Sendable {
    /// The AES block size in bytes.
    public static let blockByteCount = 16

    /// Encrypts one 16-byte block in place with AES-128, AES-192 or AES-256 (chosen by the key size).
    ///
    /// For example:
    /// ```swift
    /// var block: [UInt8] = Array(repeating: 0, count: 16)
    /// try AES.permute(&block, key: SymmetricKey(size: .bits256))
    /// ```
    ///
    /// - Parameters:
    ///   - payload: Exactly 16 bytes, replaced by their encryption.
    ///   - key: A 128-, 192- or 256-bit key.
    /// - Throws: ``CryptoKitError/incorrectKeySize`` for other key sizes;
    ///   ``CryptoKitError/incorrectParameterSize`` if `payload` is not 16 bytes.
    public static func permute<Payload: MutableCollection>(
        _ payload: inout Payload, key: SymmetricKey
    ) throws(CryptoKitError) where Payload.Element == UInt8 {
        try transformBlock(&payload, key: key, direction: .encryption)
    }

    /// Decrypts one 16-byte block in place: the inverse of ``permute(_:key:)``.
    ///
    /// - Parameters:
    ///   - payload: Exactly 16 bytes, replaced by their decryption.
    ///   - key: A 128-, 192- or 256-bit key.
    /// - Throws: ``CryptoKitError/incorrectKeySize`` for other key sizes;
    ///   ``CryptoKitError/incorrectParameterSize`` if `payload` is not 16 bytes.
    public static func inversePermute<Payload: MutableCollection>(
        _ payload: inout Payload, key: SymmetricKey
    ) throws(CryptoKitError) where Payload.Element == UInt8 {
        try transformBlock(&payload, key: key, direction: .decryption)
    }

    private static func transformBlock<Payload: MutableCollection>(
        _ payload: inout Payload, key: SymmetricKey, direction: AESRoundKeys.Direction
    ) throws(CryptoKitError) where Payload.Element == UInt8 {
        guard payload.count == blockByteCount else { throw .incorrectParameterSize }
        let keys = try key.withUnsafeBytes { (bytes) throws(CryptoKitError) in
            try AESRoundKeys(key: bytes, direction: direction)
        }
        var block = Array(payload)
        block.withUnsafeMutableBytes { transformBlocks($0.baseAddress!, count: 1, keys: keys, direction: direction) }
        var index = payload.startIndex
        for byte in block {
            payload[index] = byte
            payload.formIndex(after: &index)
        }
        block.withUnsafeMutableBytes { secureZero($0.baseAddress!, count: $0.count) }
    }
}
