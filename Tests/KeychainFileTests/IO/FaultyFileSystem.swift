import Foundation
@testable import KeychainFile

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The real file system with one fault injected: the `n`-th call (counting from 1) of one operation throws
/// `KeychainError.io` with `errno` (EIO by default), as a full disk or a failing drive would; or the `n`-th
/// write is short — it writes part of its bytes and returns their count — after which later writes go on,
/// or fail with ENOSPC as on a disk that just filled up; or reads of some bytes of a file fail with EIO, a few
/// times or every time (``failReads(of:touching:times:)``); or the process dies at the `n`-th call, which then and
/// every later call leave the disk alone (``Fault/crash``). Every other call goes through.
final class FaultyFileSystem: FileSystem, @unchecked Sendable {
    // `@unchecked Sendable`: tests use one instance from one thread at a time; the counters sit behind a lock.
    enum Operation: String, CaseIterable, Sendable {
        case createExclusive, write, sync, rename, link, syncDirectory, truncate
        case openExisting, read, size, fileIdentity, pathIdentity, removeIfPresent, contentsOfDirectory, openLock, lock
    }

    /// What happens at the armed call.
    enum Fault: Sendable, CustomStringConvertible {
        /// The call throws `KeychainError.io` with this errno.
        case error(Int32)
        /// A write writes only the first half of its bytes (at least one) and returns that count; later writes
        /// then throw `KeychainError.io` with `errno` if given, or go on normally if `nil`.
        case shortWrite(thenErrno: Int32?)
        /// A read succeeds but one bit of what it returns is flipped: bit 0 of the byte `fromEnd` bytes before
        /// the end of the bytes read (the first byte if it read fewer), as a disk returning bad data would.
        case flippedBit(fromEnd: Int)
        /// The process dies at this call, as when it is killed there: neither this call nor any later one of any
        /// operation (until ``FaultyFileSystem/heal()``) reaches the disk; each throws `KeychainError.io` (EIO), so
        /// that whatever the code does after the failure it cannot change the files. What was written before
        /// stays, as a killed process's writes stay in the page cache.
        case crash

        var description: String {
            switch self {
            case .flippedBit(let fromEnd): return "a bit flipped \(fromEnd) bytes before the end of a read"
            case .crash: return "a crash"
            case .error(let code): return code == EIO ? "EIO" : code == ENOSPC ? "ENOSPC" : "errno \(code)"
            case .shortWrite(nil): return "short write, then writes go on"
            case .shortWrite(let code?): return "short write, then \(code == ENOSPC ? "ENOSPC" : "errno \(code)")"
            }
        }
    }

    private let base = PosixFileSystem()
    /// How many of the next acknowledgement writes and withdrawals fail with EIO (they are not counted
    /// operations: the lock file's block is written once per change).
    var failAcknowledgementWrites = 0
    private let lock = NSLock()
    private var counts: [Operation: Int] = [:]
    private var failing: (operation: Operation, call: Int, fault: Fault)?
    /// After a short write that is to be followed by failures: the errno later writes fail with.
    private var writesFailWith: Int32?
    /// Whether the armed failure has happened.
    private(set) var fired = false
    /// Set when an armed ``Fault/crash`` fired: every call fails until ``heal()``.
    private(set) var crashed = false
    /// While set, every change is refused with this errno, as on a read-only mount (EROFS) or where the process
    /// may not write (EACCES): opening for writing, creating, renaming, linking and removing. Reads go through.
    private var refusingChanges: Int32?

    /// Refuses every change from now on with `code` (EROFS, EACCES), or stops refusing (`nil`).
    func refuseChanges(_ code: Int32?) {
        lock.lock()
        defer { lock.unlock() }
        refusingChanges = code
    }

    /// Throws as a read-only file system would if changes are being refused.
    private func checkChange(_ operation: String, _ path: String) throws(KeychainError) {
        lock.lock()
        defer { lock.unlock() }
        if let code = refusingChanges { throw KeychainError.io(operation: operation, errno: code, path: path) }
    }

    /// Operations every call of which fails with EIO until ``heal()``, besides the one armed fault: a disk that
    /// keeps failing.
    private var alwaysFailing: Set<Operation> = []

    /// Makes every call of `operation` fail with EIO until ``heal()``.
    func failAlways(_ operation: Operation) {
        lock.lock()
        defer { lock.unlock() }
        alwaysFailing.insert(operation)
    }

    /// Reads of one file that touch a range of its bytes and fail with EIO: the next `remaining` of them, or
    /// every one (`nil`) until ``heal()``; a sector that reads again after a few tries, or one that never does.
    private var failingReads: (path: String, range: Range<Int>, remaining: Int?)?
    /// How many reads ``failReads(of:touching:times:)`` made fail since it was armed.
    private(set) var failedReads = 0

    /// Makes reads of the file at `path` that touch its bytes `range` fail with EIO: the next `times` of them,
    /// or every one until ``heal()`` when `times` is `nil`. Reads of other bytes, and of other files, go through.
    func failReads(of path: String, touching range: Range<Int>, times: Int?) {
        lock.lock()
        defer { lock.unlock() }
        failingReads = (path, range, times)
        failedReads = 0
    }

    /// Throws EIO if a read of `count` bytes at `offset` of `path` is one ``failReads(of:touching:times:)`` armed.
    func checkRead(_ path: String, offset: Int, count: Int) throws(KeychainError) {
        lock.lock()
        defer { lock.unlock() }
        guard let failing = failingReads, failing.path == path, count > 0, failing.range.overlaps(offset..<(offset + count)) else {
            return
        }
        if let remaining = failing.remaining {
            guard remaining > 0 else { return }
            failingReads?.remaining = remaining - 1
        }
        failedReads += 1
        throw KeychainError.io(operation: "injected read failure at file bytes \(failing.range)", errno: EIO, path: path)
    }

    /// Arms a failure of the `call`-th `operation` from now on.
    func fail(_ operation: Operation, call: Int = 1, errno code: Int32 = EIO) {
        inject(.error(code), at: operation, call: call)
    }

    /// Arms `fault` at the `call`-th `operation` from now on (a short write only at a write, a flipped bit only at a read).
    func inject(_ fault: Fault, at operation: Operation, call: Int = 1) {
        switch fault {
        case .error, .crash: break
        case .shortWrite: precondition(operation == .write, "a short write is armed at a write")
        case .flippedBit(let fromEnd):
            precondition(operation == .read && fromEnd >= 1, "a flipped bit is armed at a read, within what it read")
        }
        lock.lock()
        defer { lock.unlock() }
        counts = [:]
        failing = (operation, call, fault)
        writesFailWith = nil
        fired = false
        crashed = false
    }

    /// Starts counting calls from zero again, leaving any armed fault as it is.
    func resetCounts() {
        lock.lock()
        defer { lock.unlock() }
        counts = [:]
    }

    /// How many calls of `operation` were made since the last fault was armed or the counts were reset.
    func calls(of operation: Operation) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return counts[operation, default: 0]
    }

    /// The fault armed, if any.
    var armedFault: Fault? {
        lock.lock()
        defer { lock.unlock() }
        return failing?.fault
    }

    /// Disarms.
    func heal() {
        lock.lock()
        defer { lock.unlock() }
        failing = nil
        writesFailWith = nil
        alwaysFailing = []
        failingReads = nil
        crashed = false
    }

    /// Counts a call of `operation` and throws if it is the one armed to fail; returns true if it is an
    /// armed short write or flipped bit.
    @discardableResult
    func check(_ operation: Operation, _ path: String) throws(KeychainError) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        counts[operation, default: 0] += 1
        if crashed {
            throw KeychainError.io(operation: "\(operation.rawValue) after the simulated crash", errno: EIO, path: path)
        }
        if alwaysFailing.contains(operation) {
            fired = true
            throw KeychainError.io(operation: "injected \(operation.rawValue) failure (every call)", errno: EIO, path: path)
        }
        if operation == .write, let code = writesFailWith {
            throw KeychainError.io(operation: "injected write failure after a short write", errno: code, path: path)
        }
        guard let failing, failing.operation == operation, failing.call == counts[operation] else { return false }
        fired = true
        switch failing.fault {
        case .error(let code):
            throw KeychainError.io(operation: "injected \(operation.rawValue) failure", errno: code, path: path)
        case .shortWrite(let then):
            writesFailWith = then
            return true
        case .flippedBit:
            return true
        case .crash:
            crashed = true
            throw KeychainError.io(operation: "injected crash at \(operation.rawValue)", errno: EIO, path: path)
        }
    }

    func openReadWrite(_ path: String) throws(KeychainError) -> any KeychainFileHandle {
        try check(.openExisting, path)
        try checkChange("open", path)
        return FaultyFileHandle(try base.openReadWrite(path), fileSystem: self)
    }

    /// Not a fault point: reached only after opening for writing was refused.
    func openReadOnly(_ path: String, refusal: Int32) throws(KeychainError) -> any KeychainFileHandle {
        FaultyFileHandle(try base.openReadOnly(path, refusal: refusal), fileSystem: self)
    }

    func createExclusive(_ path: String) throws(KeychainError) -> any KeychainFileHandle {
        try check(.createExclusive, path)
        try checkChange("open (create)", path)
        return FaultyFileHandle(try base.createExclusive(path), fileSystem: self)
    }

    func rename(_ source: String, to destination: String) throws(KeychainError) {
        try check(.rename, destination)
        try checkChange("rename", destination)
        try base.rename(source, to: destination)
    }

    func link(_ source: String, to destination: String) throws(KeychainError) {
        try check(.link, destination)
        try checkChange("link", destination)
        try base.link(source, to: destination)
    }

    func syncDirectory(containing path: String) throws(KeychainError) {
        try check(.syncDirectory, path)
        try base.syncDirectory(containing: path)
    }

    func removeIfPresent(_ path: String) throws(KeychainError) {
        try check(.removeIfPresent, path)
        try checkChange("unlink", path)
        try base.removeIfPresent(path)
    }

    func exists(_ path: String) -> Bool { base.exists(path) }

    func identity(of path: String) throws(KeychainError) -> FileIdentity? {
        try check(.pathIdentity, path)
        return try base.identity(of: path)
    }

    func identityAndSize(of path: String) throws(KeychainError) -> (identity: FileIdentity, size: Int)? {
        try check(.pathIdentity, path)
        return try base.identityAndSize(of: path)
    }

    func contentsOfDirectory(_ path: String) throws(KeychainError) -> [String] {
        try check(.contentsOfDirectory, path)
        return try base.contentsOfDirectory(path)
    }

    func openLock(_ path: String) throws(KeychainError) -> any KeychainLockHandle {
        try check(.openLock, path)
        try checkChange("open (lock file)", path)
        return FaultyLockHandle(try base.openLock(path), fileSystem: self, path: path)
    }

    /// Not a fault point: reached only after opening the lock file for writing was refused.
    func openLockReadOnly(_ path: String) throws(KeychainError) -> (any KeychainLockHandle)? {
        try base.openLockReadOnly(path).map { FaultyLockHandle($0, fileSystem: self, path: path) }
    }

    func isRegularFile(_ path: String) -> Bool { base.isRegularFile(path) }

    func resolve(_ path: String, creating: Bool) throws(KeychainError) -> String { try base.resolve(path, creating: creating) }
}

/// A file handle whose calls go through ``FaultyFileSystem/check(_:_:)``. A failing write writes nothing;
/// a short write writes the first half of its bytes.
final class FaultyFileHandle: KeychainFileHandle, @unchecked Sendable {
    private let base: any KeychainFileHandle
    private let fileSystem: FaultyFileSystem

    init(_ base: any KeychainFileHandle, fileSystem: FaultyFileSystem) {
        self.base = base
        self.fileSystem = fileSystem
    }

    var path: String { base.path }

    var writeRefusal: Int32? { base.writeRefusal }

    func linkCount() throws(KeychainError) -> Int { try base.linkCount() }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        let flips = try fileSystem.check(.read, path)
        try fileSystem.checkRead(path, offset: offset, count: buffer.count)
        let count = try base.read(into: buffer, at: offset)
        if flips, count > 0, case .flippedBit(let fromEnd) = fileSystem.armedFault {
            buffer[max(0, count - fromEnd)] ^= 1
        }
        return count
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        if try fileSystem.check(.write, path), case .shortWrite? = fileSystem.armedFault, bytes.count > 1 {
            return try base.write(UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count / 2)]), at: offset)
        }
        return try base.write(bytes, at: offset)
    }

    func size() throws(KeychainError) -> Int {
        try fileSystem.check(.size, path)
        return try base.size()
    }

    func truncate(to size: Int) throws(KeychainError) {
        try fileSystem.check(.truncate, path)
        try base.truncate(to: size)
    }

    func sync() throws(KeychainError) {
        try fileSystem.check(.sync, path)
        try base.sync()
    }

    func identity() throws(KeychainError) -> FileIdentity {
        try fileSystem.check(.fileIdentity, path)
        return try base.identity()
    }

    func close() { base.close() }
}

/// A lock handle whose `lock` goes through ``FaultyFileSystem/check(_:_:)``.
final class FaultyLockHandle: KeychainLockHandle, @unchecked Sendable {
    private let base: any KeychainLockHandle
    private let fileSystem: FaultyFileSystem
    private let path: String

    init(_ base: any KeychainLockHandle, fileSystem: FaultyFileSystem, path: String) {
        self.base = base
        self.fileSystem = fileSystem
        self.path = path
    }

    func lock(exclusive: Bool, wait: Bool) throws(KeychainError) -> Bool {
        try fileSystem.check(.lock, path)
        return try base.lock(exclusive: exclusive, wait: wait)
    }

    func unlock() { base.unlock() }

    func unlockUnchanged() { base.unlockUnchanged() }

    var changeCounter: UInt64? { base.changeCounter }

    func readAcknowledgement() -> [UInt8]? { base.readAcknowledgement() }

    func writeAcknowledgement(_ bytes: [UInt8]) throws(KeychainError) {
        if fileSystem.crashed { throw KeychainError.io(operation: "acknowledgement after the simulated crash", errno: EIO, path: path) }
        if fileSystem.failAcknowledgementWrites > 0 {
            fileSystem.failAcknowledgementWrites -= 1
            throw KeychainError.io(operation: "injected acknowledgement write failure", errno: EIO, path: path)
        }
        try base.writeAcknowledgement(bytes)
    }

    func withdrawAcknowledgement() throws(KeychainError) {
        if fileSystem.crashed { throw KeychainError.io(operation: "withdrawal after the simulated crash", errno: EIO, path: path) }
        if fileSystem.failAcknowledgementWrites > 0 {
            fileSystem.failAcknowledgementWrites -= 1
            throw KeychainError.io(operation: "injected acknowledgement withdrawal failure", errno: EIO, path: path)
        }
        try base.withdrawAcknowledgement()
    }
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
