import Foundation
@testable import KeychainFile

/// A keychain file on an in-memory file system (no disk IO), opened with a fixed random source and clock so
/// that every execution is reproducible from its input.
struct FuzzStore {
    static let path = "/fuzz/keychain.kcf"
    static let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_767_225_600) }

    let fileSystem = MemoryFileSystem()
    var random = FuzzRandom()

    /// A file system holding `bytes` at ``path``.
    init(_ bytes: [UInt8]) {
        do {
            let handle = try fileSystem.createExclusive(Self.path)
            try bytes.withBytes { (raw) throws(KeychainError) in try handle.writeAll(raw, at: 0) }
            handle.close()
        } catch {
            Invariant.check(false, "the in-memory file system refused to hold the input: \(error)")
        }
    }

    /// Opens the keychain at `path` (``path`` unless told), without automatic compaction.
    mutating func open(_ path: String = Self.path, with credential: Credential) throws(KeychainError) -> Keychain {
        try Keychain.open(
            at: path, credential: credential, options: Keychain.OpenOptions(autoCompaction: .disabled),
            random: RandomSource(random), clock: Self.clock, fileSystem: fileSystem)
    }

    /// The bytes of the file at ``path`` now.
    func bytes() -> [UInt8] {
        do {
            let file = try fileSystem.openExisting(Self.path)
            defer { file.close() }
            return try file.readExactly(count: try file.size(), at: 0)
        } catch {
            Invariant.check(false, "the in-memory file cannot be read back: \(error)")
            return []
        }
    }

    /// Puts `bytes` in place of the file's content, as another process's writes would leave it.
    func overwrite(with bytes: [UInt8]) {
        do {
            let file = try fileSystem.openExisting(Self.path)
            defer { file.close() }
            try bytes.withBytes { (raw) throws(KeychainError) in try file.writeAll(raw, at: 0) }
            if try file.size() > bytes.count { try file.truncate(to: bytes.count) }
        } catch {
            Invariant.check(false, "the in-memory file cannot be written: \(error)")
        }
    }
}
