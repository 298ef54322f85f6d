@_spi(KeychainFileInternals) import KeychainCrypto

extension SealedSecret {
    /// Verifies the box against `aad` and returns the secret, decrypted straight from where the box is kept.
    ///
    /// - Throws: `CryptoKitError.authenticationFailure` when the box does not verify.
    func open(using key: AES.GCM.PreparedKey, authenticating aad: [UInt8]) throws(CryptoKitError) -> [UInt8] {
        // A box is at least 28 bytes (checked when it was read or sealed); a shorter one fails in `open`.
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
