import Foundation
@testable import KeychainFile

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The real file system with one failure injected: the `n`-th call (counting from 1) of one operation
/// throws `KeychainError.io` with `errno` (EIO by default), as a full disk or a failing drive would. Every
/// other call goes through.
final class FaultyFileSystem: FileSystem, @unchecked Sendable {
    // `@unchecked Sendable`: tests use one instance from one thread at a time; the counters sit behind a lock.
    enum Operation: String, CaseIterable, Sendable {
        case createExclusive, write, sync, rename, link, syncDirectory, truncate
    }

    private let base = PosixFileSystem()
    private let lock = NSLock()
    private var counts: [Operation: Int] = [:]
    private var failing: (operation: Operation, call: Int, errno: Int32)?
    /// Whether the armed failure has happened.
    private(set) var fired = false

    /// Arms a failure of the `call`-th `operation` from now on.
    func fail(_ operation: Operation, call: Int = 1, errno code: Int32 = EIO) {
        lock.lock()
        defer { lock.unlock() }
        counts = [:]
        failing = (operation, call, code)
        fired = false
    }

    /// Disarms.
    func heal() {
        lock.lock()
        defer { lock.unlock() }
        failing = nil
    }

    /// Counts a call of `operation` and throws if it is the one armed to fail.
    func check(_ operation: Operation, _ path: String) throws(KeychainError) {
        lock.lock()
        defer { lock.unlock() }
        counts[operation, default: 0] += 1
        if let failing, failing.operation == operation, failing.call == counts[operation] {
            fired = true
            throw KeychainError.io(operation: "injected \(operation.rawValue) failure", errno: failing.errno, path: path)
        }
    }

    func openExisting(_ path: String) throws(KeychainError) -> any KeychainFileHandle {
        FaultyFileHandle(try base.openExisting(path), fileSystem: self)
    }

    func createExclusive(_ path: String) throws(KeychainError) -> any KeychainFileHandle {
        try check(.createExclusive, path)
        return FaultyFileHandle(try base.createExclusive(path), fileSystem: self)
    }

    func rename(_ source: String, to destination: String) throws(KeychainError) {
        try check(.rename, destination)
        try base.rename(source, to: destination)
    }

    func link(_ source: String, to destination: String) throws(KeychainError) {
        try check(.link, destination)
        try base.link(source, to: destination)
    }

    func syncDirectory(containing path: String) throws(KeychainError) {
        try check(.syncDirectory, path)
        try base.syncDirectory(containing: path)
    }

    func removeIfPresent(_ path: String) throws(KeychainError) { try base.removeIfPresent(path) }
    func exists(_ path: String) -> Bool { base.exists(path) }
    func identity(of path: String) throws(KeychainError) -> FileIdentity? { try base.identity(of: path) }
    func contentsOfDirectory(_ path: String) throws(KeychainError) -> [String] { try base.contentsOfDirectory(path) }
    func openLock(_ path: String) throws(KeychainError) -> any KeychainLockHandle { try base.openLock(path) }
}

/// A file handle whose writes, syncs and truncations go through ``FaultyFileSystem/check(_:_:)``. A failing
/// write writes nothing; an armed short write is not modelled here (the log's `writeAll` loops over them).
final class FaultyFileHandle: KeychainFileHandle, @unchecked Sendable {
    private let base: any KeychainFileHandle
    private let fileSystem: FaultyFileSystem

    init(_ base: any KeychainFileHandle, fileSystem: FaultyFileSystem) {
        self.base = base
        self.fileSystem = fileSystem
    }

    var path: String { base.path }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        try base.read(into: buffer, at: offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        try fileSystem.check(.write, path)
        return try base.write(bytes, at: offset)
    }

    func size() throws(KeychainError) -> Int { try base.size() }

    func truncate(to size: Int) throws(KeychainError) {
        try fileSystem.check(.truncate, path)
        try base.truncate(to: size)
    }

    func sync() throws(KeychainError) {
        try fileSystem.check(.sync, path)
        try base.sync()
    }

    func identity() throws(KeychainError) -> FileIdentity { try base.identity() }
    func close() { base.close() }
}

extension Keychain {
    /// A keychain created on `fileSystem`, with fast PBKDF2, for fault-injection tests.
    static func createForTesting(
        at path: String, credential: Credential = TestKeychain.password, fileSystem: any FileSystem,
        options: CreationOptions = TestKeychain.fastOptions
    ) throws(KeychainError) -> Keychain {
        try create(at: path, credential: credential, options: options, random: RandomSource(SystemRandomNumberGenerator()),
                   clock: { Date() }, fileSystem: fileSystem)
    }

    /// A keychain opened on `fileSystem`, for fault-injection tests.
    static func openForTesting(
        at path: String, credential: Credential = TestKeychain.password, fileSystem: any FileSystem,
        options: OpenOptions = OpenOptions()
    ) throws(KeychainError) -> Keychain {
        try open(at: path, credential: credential, options: options, random: RandomSource(SystemRandomNumberGenerator()),
                 clock: { Date() }, fileSystem: fileSystem)
    }
}
