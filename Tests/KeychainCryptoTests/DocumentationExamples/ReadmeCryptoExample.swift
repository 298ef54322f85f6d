// README.md's KeychainCrypto block, as the regions between `// example: readme-crypto` and `// example end`
// (DocumentationExampleTests, in KeychainFileTests, checks it byte for byte). This file imports only what the
// block imports (and Testing).
// example: readme-crypto
import KeychainCrypto
// example end
import Testing

@Suite("README KeychainCrypto example")
struct ReadmeCryptoExample {
    @Test("The KeychainCrypto block hashes, authenticates, seals, opens and derives, as written")
    func cryptoBlock() throws {
        // example: readme-crypto

        let digest = SHA256.hash(data: Array("abc".utf8))
        let key = SymmetricKey(size: .bits256)
        let tag = HMAC<SHA256>.authenticationCode(for: Array("message".utf8), using: key)
        let box = try AES.GCM.seal(Array("secret".utf8), using: key, authenticating: Array("v1".utf8))
        let plaintext = try AES.GCM.open(box, using: key, authenticating: Array("v1".utf8))
        // Passwords: at least 210,000 rounds through the checked call (600,000 is OWASP's advice).
        let passwordKey = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array("correct horse battery staple".utf8), salt: Array(repeating: 7, count: 32),
            using: .sha256, outputByteCount: 32, rounds: 600_000)
        // example end
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        #expect(Array(digest) == hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: Array("message".utf8), using: key))
        #expect(plaintext == Array("secret".utf8))
        #expect(passwordKey.bitCount == 256)
    }

    private func hex(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map {
            let start = text.index(text.startIndex, offsetBy: $0)
            return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
        }
    }
}
