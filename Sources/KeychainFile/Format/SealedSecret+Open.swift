@_spi(KeychainFileInternals) import KeychainCrypto

extension SealedSecret {
    /// Decrypts the secret straight from where the box is kept, without checking its tag again.
    ///
    /// Every sealed secret in memory was verified when its box was read from a file (when a record was replayed,
    /// or read back after a rewrite, ``RecordLog/WrittenSecrets``) or was sealed by this process, and memory is
    /// trusted as the decrypted attributes beside it are: checking the tag on every read would spend the GHASH
    /// over its 78 bytes of associated data and its ciphertext, most of the cost of reading a short secret, to
    /// guard against nothing a file can do.
    ///
    /// - Throws: `CryptoKitError.incorrectParameterSize` for a box shorter than 28 bytes (none is kept).
    func decrypt(using key: AES.GCM.PreparedKey) throws(CryptoKitError) -> [UInt8] {
        var plaintext = [UInt8](repeating: 0, count: max(0, plaintextCount))
        try box.withBytes { (box) throws(CryptoKitError) in
            try plaintext.withMutableBytes { (output) throws(CryptoKitError) in
                try AES.GCM.decryptVerified(box, using: key, into: output)
            }
        }
        return plaintext
    }

    /// Verifies the box against `aad` and returns the secret: what the tests use to check that a box was sealed
    /// with the associated data SPEC.md §7.2 gives it.
    ///
    /// - Throws: `CryptoKitError.authenticationFailure` when the box does not verify.
    func open(using key: AES.GCM.PreparedKey, authenticating aad: [UInt8]) throws(CryptoKitError) -> [UInt8] {
        var plaintext = [UInt8](repeating: 0, count: max(0, plaintextCount))
        try box.withBytes { (box) throws(CryptoKitError) in
            try aad.withBytes { (associated) throws(CryptoKitError) in
                try plaintext.withMutableBytes { (output) throws(CryptoKitError) in
                    try AES.GCM.open(box, using: key, authenticating: associated, into: output)
                }
            }
        }
        return plaintext
    }
}
