import Foundation
@testable import KeychainFile

/// The real file system, with another process's keychain appearing at `path` just before this one creates its
/// own there: `openOrCreate` found nothing, and must open what the other process made rather than fail.
final class RacingFileSystem: FileSystem, @unchecked Sendable {
    // `@unchecked Sendable`: `raced` is behind `lock`; the other properties are constants.
    private let base = PosixFileSystem()
    private let path: String
    private let otherProcess: @Sendable (String) throws -> Void
    private let lock = NSLock()
    private var raced = false

    /// - Parameters:
    ///   - path: Where the other process creates its keychain.
    ///   - otherProcess: What it does there, run once, when this process is about to create a new file at `path`.
    init(racingAt path: String, otherProcess: @escaping @Sendable (String) throws -> Void) {
        self.path = path
        self.otherProcess = otherProcess
    }

    /// Whether the other process has run.
    var hasRaced: Bool { lock.withLock { raced } }

    func resolve(_ path: String, creating: Bool) throws(KeychainError) -> String {
        if creating, path == self.path, lock.withLock({ () -> Bool in defer { raced = true }; return !raced }) {
            do { try otherProcess(path) } catch { throw .invalidParameter("the other process failed: \(error)") }
        }
        return try base.resolve(path, creating: creating)
    }

    func openReadWrite(_ path: String) throws(KeychainError) -> any KeychainFileHandle { try base.openReadWrite(path) }
    func openReadOnly(_ path: String, refusal: Int32) throws(KeychainError) -> any KeychainFileHandle {
        try base.openReadOnly(path, refusal: refusal)
    }
    func createExclusive(_ path: String) throws(KeychainError) -> any KeychainFileHandle { try base.createExclusive(path) }
    func rename(_ source: String, to destination: String) throws(KeychainError) { try base.rename(source, to: destination) }
    func link(_ source: String, to destination: String) throws(KeychainError) { try base.link(source, to: destination) }
    func identity(of path: String) throws(KeychainError) -> FileIdentity? { try base.identity(of: path) }
    func identityAndSize(of path: String) throws(KeychainError) -> (identity: FileIdentity, size: Int)? {
        try base.identityAndSize(of: path)
    }
    func contentsOfDirectory(_ path: String) throws(KeychainError) -> [String] { try base.contentsOfDirectory(path) }
    func openLock(_ path: String) throws(KeychainError) -> any KeychainLockHandle { try base.openLock(path) }
    func openLockReadOnly(_ path: String) throws(KeychainError) -> (any KeychainLockHandle)? { try base.openLockReadOnly(path) }
    func isRegularFile(_ path: String) -> Bool { base.isRegularFile(path) }
    func syncDirectory(containing path: String) throws(KeychainError) { try base.syncDirectory(containing: path) }
    func removeIfPresent(_ path: String) throws(KeychainError) { try base.removeIfPresent(path) }
    func exists(_ path: String) -> Bool { base.exists(path) }
}
