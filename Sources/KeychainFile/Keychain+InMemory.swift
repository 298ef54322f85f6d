#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeychainCrypto

extension Keychain {
    /// A keychain that lives in memory only, with the same API and behaviour as one on disk: for an
    /// application's own tests, which should not need a real keychain or a file.
    ///
    /// The "file" is held in memory and encrypted exactly as on disk, under a random key; it is gone when the
    /// keychain is released. Compaction, credential changes and statistics work as usual.
    ///
    /// For example:
    /// ```swift
    /// let keychain = try Keychain.inMemory()
    /// try keychain.setPassword("s3cret", forService: "mail.example.com", account: "ann")
    /// #expect(try keychain.password(forService: "mail.example.com", account: "ann") == "s3cret")
    /// ```
    ///
    /// - Parameter autoCompaction: When commits compact on their own.
    /// - Returns: An empty keychain.
    /// - Throws: Nothing in practice; the signature matches ``create(at:credential:options:)``.
    public static func inMemory(autoCompaction: AutoCompaction = .standard) throws(KeychainError) -> Keychain {
        try create(
            at: "/in-memory/keychain.kcf", credential: .key(SymmetricKey(size: .bits256)),
            options: CreationOptions(autoCompaction: autoCompaction), random: RandomSource(SystemRandomNumberGenerator()),
            clock: { Date() }, fileSystem: MemoryFileSystem())
    }
}
