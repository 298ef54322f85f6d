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
@_spi(KeychainFileInternals) import KeychainCrypto

/// A file system held in memory: what ``Keychain/inMemory()`` stores its file in. It behaves as the POSIX
/// one does where the keychain depends on it — exclusive creation, atomic rename, links that never replace,
/// file identities that change when another file is renamed over a path, shared and exclusive locks — so the
/// keychain runs exactly the same code paths, minus the disk.
///
/// `@unchecked Sendable`: every mutable property sits behind `lock`.
final class MemoryFileSystem: FileSystem, @unchecked Sendable {
    private let lock = Lock()
    private var files: [String: MemoryFile] = [:]
    private var locks: [String: MemoryLock] = [:]
    private var nextInode: UInt64 = 1

    private func withLock<Result>(_ body: () throws(KeychainError) -> Result) throws(KeychainError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    func openReadWrite(_ path: String) throws(KeychainError) -> any KeychainFileHandle {
        try withLock { () throws(KeychainError) -> any KeychainFileHandle in
            guard let file = files[path] else { throw .io(operation: "open", errno: ENOENT, path: path) }
            return MemoryFileHandle(file: file, path: path)
        }
    }

    func openReadOnly(_ path: String, refusal: Int32) throws(KeychainError) -> any KeychainFileHandle {
        try withLock { () throws(KeychainError) -> any KeychainFileHandle in
            guard let file = files[path] else { throw .io(operation: "open (read-only)", errno: ENOENT, path: path) }
            return MemoryFileHandle(file: file, path: path, writeRefusal: refusal)
        }
    }

    func createExclusive(_ path: String) throws(KeychainError) -> any KeychainFileHandle {
        try withLock { () throws(KeychainError) -> any KeychainFileHandle in
            guard files[path] == nil else { throw .io(operation: "open (create)", errno: EEXIST, path: path) }
            let file = MemoryFile(inode: nextInode)
            nextInode += 1
            files[path] = file
            return MemoryFileHandle(file: file, path: path)
        }
    }

    func rename(_ source: String, to destination: String) throws(KeychainError) {
        try withLock { () throws(KeychainError) in
            guard let file = files.removeValue(forKey: source) else { throw .io(operation: "rename", errno: ENOENT, path: source) }
            files.updateValue(file, forKey: destination)?.changeNames(by: -1)
        }
    }

    func link(_ source: String, to destination: String) throws(KeychainError) {
        try withLock { () throws(KeychainError) in
            guard let file = files[source] else { throw .io(operation: "link", errno: ENOENT, path: source) }
            guard files[destination] == nil else { throw .io(operation: "link", errno: EEXIST, path: destination) }
            files[destination] = file
            file.changeNames(by: 1)
        }
    }

    func syncDirectory(containing path: String) throws(KeychainError) {}

    func removeIfPresent(_ path: String) throws(KeychainError) {
        try withLock { () throws(KeychainError) in files.removeValue(forKey: path)?.changeNames(by: -1) }
    }

    func exists(_ path: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return files[path] != nil
    }

    func identity(of path: String) throws(KeychainError) -> FileIdentity? {
        try withLock { () throws(KeychainError) -> FileIdentity? in files[path].map { FileIdentity(device: 0, inode: $0.inode) } }
    }

    func identityAndSize(of path: String) throws(KeychainError) -> (identity: FileIdentity, size: Int)? {
        let file: MemoryFile? = try withLock { () throws(KeychainError) -> MemoryFile? in files[path] }
        guard let file else { return nil }
        file.lock.lock()
        defer { file.lock.unlock() }
        return (FileIdentity(device: 0, inode: file.inode), file.bytes.count)
    }

    func contentsOfDirectory(_ path: String) throws(KeychainError) -> [String] {
        try withLock { () throws(KeychainError) -> [String] in
            files.keys.filter { directoryName(of: $0) == path }.map(baseName(of:))
        }
    }

    func openLock(_ path: String) throws(KeychainError) -> any KeychainLockHandle {
        try withLock { () throws(KeychainError) -> any KeychainLockHandle in
            let shared = locks[path] ?? MemoryLock()
            locks[path] = shared
            return MemoryLockHandle(lock: shared)
        }
    }

    func openLockReadOnly(_ path: String) throws(KeychainError) -> (any KeychainLockHandle)? {
        try withLock { () throws(KeychainError) -> (any KeychainLockHandle)? in locks[path].map { MemoryLockHandle(lock: $0) } }
    }

    func isRegularFile(_ path: String) -> Bool { exists(path) }

    /// Paths here are names in a dictionary, without symbolic links: each resolves to itself.
    func resolve(_ path: String, creating: Bool) throws(KeychainError) -> String { path }
}
