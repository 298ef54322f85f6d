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

/// The bytes and identity of one file in a ``MemoryFileSystem``.
///
/// `@unchecked Sendable`: `bytes` is read and written only under `lock`.
final class MemoryFile: @unchecked Sendable {
    let inode: UInt64
    let lock = Lock()
    var bytes: [UInt8] = []
    /// How many paths name this file (hard links); also under `lock`.
    private var names = 1

    init(inode: UInt64) { self.inode = inode }

    var linkCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return names
    }

    func changeNames(by change: Int) {
        lock.lock()
        defer { lock.unlock() }
        names += change
    }
}

/// An open ``MemoryFile``.
///
/// `@unchecked Sendable`: the file's bytes are guarded by its lock; `isClosed` is only set by `close`, which
/// the keychain calls under its own lock.
final class MemoryFileHandle: KeychainFileHandle, @unchecked Sendable {
    private let file: MemoryFile
    let path: String
    let writeRefusal: Int32?
    private var isClosed = false

    init(file: MemoryFile, path: String, writeRefusal: Int32? = nil) {
        self.file = file
        self.path = path
        self.writeRefusal = writeRefusal
    }

    private func withFile<Result>(_ operation: String, _ body: (inout [UInt8]) -> Result) throws(KeychainError) -> Result {
        guard !isClosed else { throw .io(operation: operation, errno: EBADF, path: path) }
        file.lock.lock()
        defer { file.lock.unlock() }
        return body(&file.bytes)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        try withFile("read") { bytes in
            guard offset < bytes.count, buffer.count > 0 else { return 0 }
            let count = min(buffer.count, bytes.count - offset)
            bytes.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + count)]))
            }
            return count
        }
    }

    func write(_ source: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        // A file opened for reading only, as write(2) on such a descriptor does.
        if writeRefusal != nil { throw .io(operation: "write", errno: EBADF, path: path) }
        return try withFile("write") { bytes in
            if bytes.count < offset + source.count {
                bytes.append(contentsOf: repeatElement(0, count: offset + source.count - bytes.count))
            }
            bytes.withUnsafeMutableBytes { target in
                UnsafeMutableRawBufferPointer(rebasing: target[offset..<(offset + source.count)]).copyMemory(from: source)
            }
            return source.count
        }
    }

    func size() throws(KeychainError) -> Int {
        try withFile("size") { $0.count }
    }

    func truncate(to size: Int) throws(KeychainError) {
        if writeRefusal != nil { throw .io(operation: "truncate", errno: EINVAL, path: path) }
        try withFile("truncate") { bytes in
            if size < bytes.count {
                bytes.removeSubrange(size...)
            } else {
                bytes.append(contentsOf: repeatElement(0, count: size - bytes.count))
            }
        }
    }

    func sync() throws(KeychainError) {
        try withFile("sync") { _ in }
    }

    func identity() throws(KeychainError) -> FileIdentity {
        try withFile("identity") { _ in FileIdentity(device: 0, inode: file.inode) }
    }

    func linkCount() throws(KeychainError) -> Int {
        guard !isClosed else { throw .io(operation: "linkCount", errno: EBADF, path: path) }
        return file.linkCount
    }

    func close() { isClosed = true }
}

/// A shared/exclusive lock standing in for `flock` on a lock file.
///
/// `@unchecked Sendable`: its state sits behind `condition`.
final class MemoryLock: @unchecked Sendable {
    private let condition = Condition()
    private var readers = 0
    private var writer = false
    private var changes: UInt64 = 0
    private var acknowledgementBytes: [UInt8]? = nil

    /// The acknowledgement block standing in for the lock file's (SPEC.md §16.1).
    var acknowledgement: [UInt8]? {
        get {
            condition.lock()
            defer { condition.unlock() }
            return acknowledgementBytes
        }
        set {
            condition.lock()
            defer { condition.unlock() }
            acknowledgementBytes = newValue
        }
    }

    /// The change counter standing in for the lock file's (SPEC.md §16).
    var changeCounter: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return changes
    }

    func lock(exclusive: Bool, wait: Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while writer || (exclusive && readers > 0) {
            guard wait else { return false }
            condition.wait()
        }
        if exclusive { writer = true } else { readers += 1 }
        return true
    }

    func unlock(exclusive: Bool) {
        condition.lock()
        defer { condition.unlock() }
        if exclusive {
            changes &+= 1
            writer = false
        } else {
            readers -= 1
        }
        condition.broadcast()
    }
}

/// One holder of a ``MemoryLock``; it remembers what it holds so that `unlock` releases the right kind.
///
/// `@unchecked Sendable`: `held` is changed only by the one keychain that owns the handle, under its lock.
final class MemoryLockHandle: KeychainLockHandle, @unchecked Sendable {
    private let shared: MemoryLock
    private var held: Bool? = nil

    init(lock: MemoryLock) { shared = lock }

    var changeCounter: UInt64? { shared.changeCounter }

    func readAcknowledgement() -> [UInt8]? { shared.acknowledgement }

    func writeAcknowledgement(_ bytes: [UInt8]) throws(KeychainError) { shared.acknowledgement = bytes }

    func withdrawAcknowledgement() throws(KeychainError) { shared.acknowledgement = nil }

    func lock(exclusive: Bool, wait: Bool) throws(KeychainError) -> Bool {
        guard held == nil else { return true }
        guard shared.lock(exclusive: exclusive, wait: wait) else { return false }
        held = exclusive
        return true
    }

    func unlock() {
        guard let exclusive = held else { return }
        shared.unlock(exclusive: exclusive)
        held = nil
    }
}
