/// HKDF (RFC 5869): derives keys from input key material with an HMAC-based extract-then-expand.
///
/// For example:
/// ```swift
/// let master = SymmetricKey(size: .bits256)
/// let sealingKey = try HKDF<SHA256>.deriveKey(
///     inputKeyMaterial: master, salt: fileSalt, info: Array("record sealing".utf8), outputByteCount: 32)
/// ```
///
/// Unlike CryptoKit's, the derivation functions throw ``CryptoKitError/incorrectParameterSize`` for an
/// output length HKDF cannot produce (negative, or more than 255 hash lengths) instead of stopping the
/// process.
public struct HKDF<H: HashFunction>: Sendable {
    /// Derives a key: extract with `salt`, then expand with `info` to `outputByteCount` bytes.
    ///
    /// - Parameters:
    ///   - inputKeyMaterial: The secret to derive from.
    ///   - salt: The salt; empty means RFC 5869's default of a hash-length string of zeros.
    ///   - info: Context and application-specific information that separates derived keys.
    ///   - outputByteCount: The length of the derived key, 0 to 255 × the hash length.
    /// - Returns: The derived key.
    /// - Throws: ``CryptoKitError/incorrectParameterSize`` if `outputByteCount` is out of range.
    @inlinable
    public static func deriveKey<Salt: Sequence, Info: Sequence>(
        inputKeyMaterial: SymmetricKey, salt: Salt, info: Info, outputByteCount: Int
    ) throws(CryptoKitError) -> SymmetricKey where Salt.Element == UInt8, Info.Element == UInt8 {
        let prk = extract(inputKeyMaterial: inputKeyMaterial, salt: salt)
        return try expand(pseudoRandomKey: prk, info: info, outputByteCount: outputByteCount)
    }

    /// Derives a key with an empty salt: extract, then expand with `info`.
    ///
    /// - Parameters:
    ///   - inputKeyMaterial: The secret to derive from.
    ///   - info: Context and application-specific information that separates derived keys.
    ///   - outputByteCount: The length of the derived key, 0 to 255 × the hash length.
    /// - Returns: The derived key.
    /// - Throws: ``CryptoKitError/incorrectParameterSize`` if `outputByteCount` is out of range.
    @inlinable
    public static func deriveKey<Info: Sequence>(
        inputKeyMaterial: SymmetricKey, info: Info, outputByteCount: Int
    ) throws(CryptoKitError) -> SymmetricKey where Info.Element == UInt8 {
        try deriveKey(inputKeyMaterial: inputKeyMaterial, salt: [UInt8](), info: info, outputByteCount: outputByteCount)
    }

    /// Derives a key with an empty salt and empty info.
    ///
    /// - Parameters:
    ///   - inputKeyMaterial: The secret to derive from.
    ///   - outputByteCount: The length of the derived key, 0 to 255 × the hash length.
    /// - Returns: The derived key.
    /// - Throws: ``CryptoKitError/incorrectParameterSize`` if `outputByteCount` is out of range.
    public static func deriveKey(
        inputKeyMaterial: SymmetricKey, outputByteCount: Int
    ) throws(CryptoKitError) -> SymmetricKey {
        try deriveKey(inputKeyMaterial: inputKeyMaterial, salt: [UInt8](), info: [UInt8](), outputByteCount: outputByteCount)
    }

    /// The extract step: `PRK = HMAC(salt, inputKeyMaterial)`.
    ///
    /// - Parameters:
    ///   - inputKeyMaterial: The secret to derive from.
    ///   - salt: The salt; empty means a hash-length string of zeros.
    /// - Returns: The pseudorandom key.
    @inlinable
    public static func extract<Salt: Sequence>(
        inputKeyMaterial: SymmetricKey, salt: Salt
    ) -> HashedAuthenticationCode<H> where Salt.Element == UInt8 {
        let saltKey = SymmetricKey(data: salt)
        var authenticator = HMAC<H>(key: saltKey)
        inputKeyMaterial.withUnsafeBytes { authenticator.update(bufferPointer: $0) }
        return authenticator.finalize()
    }

    /// The expand step: `T(1) ‖ T(2) ‖ …` truncated to `outputByteCount`, where
    /// `T(i) = HMAC(PRK, T(i−1) ‖ info ‖ i)`.
    ///
    /// - Parameters:
    ///   - pseudoRandomKey: The pseudorandom key, usually the result of ``extract(inputKeyMaterial:salt:)``.
    ///   - info: Context and application-specific information.
    ///   - outputByteCount: The length of the derived key, 0 to 255 × the hash length.
    /// - Returns: The derived key.
    /// - Throws: ``CryptoKitError/incorrectParameterSize`` if `outputByteCount` is out of range.
    @inlinable
    public static func expand<PRK: Sequence, Info: Sequence>(
        pseudoRandomKey: PRK, info: Info, outputByteCount: Int
    ) throws(CryptoKitError) -> SymmetricKey where PRK.Element == UInt8, Info.Element == UInt8 {
        let prk = SymmetricKey(data: pseudoRandomKey)
        return try withContiguousBytes(of: info) { (infoBytes) throws(CryptoKitError) -> SymmetricKey in
            try expand(pseudoRandomKey: prk, info: infoBytes, outputByteCount: outputByteCount)
        }
    }

    @usableFromInline
    static func expand(
        pseudoRandomKey: SymmetricKey, info: UnsafeRawBufferPointer, outputByteCount: Int
    ) throws(CryptoKitError) -> SymmetricKey {
        let hashLength = H.Digest.byteCount
        guard outputByteCount >= 0, outputByteCount <= 255 * hashLength else {
            throw .incorrectParameterSize
        }
        let keyed = HMAC<H>(key: pseudoRandomKey)
        return SymmetricKey(count: outputByteCount) { output in
            var previous: HashedAuthenticationCode<H>? = nil
            var offset = 0
            var counter: UInt8 = 1
            while offset < outputByteCount {
                var authenticator = keyed
                previous?.withUnsafeBytes { authenticator.update(bufferPointer: $0) }
                authenticator.update(bufferPointer: info)
                withUnsafeBytes(of: counter) { authenticator.update(bufferPointer: $0) }
                let block = authenticator.finalize()
                let taken = min(hashLength, outputByteCount - offset)
                block.withUnsafeBytes { bytes in
                    (output.baseAddress! + offset).copyMemory(from: bytes.baseAddress!, byteCount: taken)
                }
                offset += taken
                counter &+= 1  // at most 255 blocks: guarded above
                previous = block
            }
        }
    }
}
