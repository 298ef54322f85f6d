#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Keychain {
    /// Opens the keychain file at `path`, or creates it there if nothing exists at that path yet.
    ///
    /// An existing file is only ever opened, never replaced: a wrong credential, a damaged file or something
    /// that is not a keychain fails as ``open(at:credential:options:)`` does. When another process creates the
    /// file between this call's look and its own creation, this call opens that file instead.
    ///
    /// For example:
    /// ```swift
    /// let keychain = try Keychain.openOrCreate(at: "secrets.kcf", credential: .password("correct horse battery staple"))
    /// ```
    ///
    /// - Parameters:
    ///   - path: The keychain file.
    ///   - credential: The password or 32-byte key that opens it, or that will open a new one.
    ///   - options: How to open an existing file (a pinned head, auto-compaction, recovery).
    ///   - creationOptions: How to create a new file (PBKDF2 cost, more credentials, auto-compaction).
    /// - Returns: The open keychain.
    /// - Throws: What ``open(at:credential:options:)`` throws for an existing file (`.wrongCredentials`,
    ///   `.corrupted`, `.notAKeychain`, …); what ``create(at:credential:options:)`` throws for a new one (`.io`
    ///   when the directory is missing or cannot be written, `.invalidParameter` for a symbolic link at `path`
    ///   that leads nowhere).
    public static func openOrCreate(
        at path: String, credential: Credential, options: OpenOptions = OpenOptions(),
        creationOptions: CreationOptions = CreationOptions()
    ) throws(KeychainError) -> Keychain {
        try openOrCreate(
            at: path, credential: credential, options: options, creationOptions: creationOptions,
            random: RandomSource(SystemRandomNumberGenerator()), clock: { Date() }, fileSystem: PosixFileSystem())
    }

    static func openOrCreate(
        at path: String, credential: Credential, options: OpenOptions, creationOptions: CreationOptions,
        random: RandomSource, clock: @escaping @Sendable () -> Date, fileSystem: any FileSystem
    ) throws(KeychainError) -> Keychain {
        do throws(KeychainError) {
            return try open(at: path, credential: credential, options: options, random: random, clock: clock, fileSystem: fileSystem)
        } catch .io(_, let code, _) where code == ENOENT {
            // Nothing there (or a directory missing, which creating reports in its own words).
        }
        do throws(KeychainError) {
            return try create(
                at: path, credential: credential, options: creationOptions, random: random, clock: clock, fileSystem: fileSystem)
        } catch {
            // Another process created the file since: open it, as if it had been there all along. Anything else
            // (a dangling symbolic link, an unwritable directory) is this call's error.
            guard case .invalidParameter = error, let file = try? fileSystem.resolve(path, creating: false),
                  fileSystem.isRegularFile(file) else { throw error }
            return try open(at: path, credential: credential, options: options, random: random, clock: clock, fileSystem: fileSystem)
        }
    }
}
