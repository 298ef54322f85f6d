#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The lock file's descriptor, kept open for the keychain's lifetime; `flock` on it, and its change counter
/// mapped (``LockFileCounter``).
///
/// `@unchecked Sendable`: the descriptor is only an integer, and `heldExclusively` is changed only by the
/// Keychain that owns the handle, which calls `lock` and `unlock` under its own lock.
final class PosixLockHandle: KeychainLockHandle, @unchecked Sendable {
    private let descriptor: Int32
    private let path: String
    private let counter: LockFileCounter?
    private var heldExclusively = false

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
        counter = LockFileCounter(descriptor: descriptor)
    }

    deinit {
        counter?.unmap()
        _ = systemClose(descriptor)
    }

    var changeCounter: UInt64? { counter?.value }

    func lock(exclusive: Bool, wait: Bool) throws(KeychainError) -> Bool {
        let operation = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB)
        while true {
            if flock(descriptor, operation) == 0 {
                heldExclusively = exclusive
                return true
            }
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK && !wait { return false }
            throw KeychainError.io(operation: "flock", errno: code, path: path)
        }
    }

    func readAcknowledgement() -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: Acknowledgement.size)
        var got = 0
        while got < bytes.count {
            let count = bytes.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + got, $0.count - got, off_t(Acknowledgement.offset + got))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            got += count
        }
        return bytes
    }

    func withdrawAcknowledgement() throws(KeychainError) {
        try writeAcknowledgement([UInt8](repeating: 0, count: Acknowledgement.magic.count))
    }

    func writeAcknowledgement(_ bytes: [UInt8]) throws(KeychainError) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress! + written, $0.count - written, off_t(Acknowledgement.offset + written))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw KeychainError.io(operation: "pwrite (acknowledgement)", errno: count < 0 ? errno : EIO, path: path) }
            written += count
        }
        #if canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
        _ = try retrying("fsync (lock file)", path) { Int(fsync(descriptor)) }
        #else
        _ = try retrying("fdatasync (lock file)", path) { Int(fdatasync(descriptor)) }
        #endif
    }

    func unlockUnchanged() {
        heldExclusively = false
        _ = flock(descriptor, LOCK_UN)
    }

    func unlock() {
        if heldExclusively {
            // Before releasing: a process that loads the counter after this returns sees the change.
            LockFileCounter.increment(descriptor: descriptor)
            heldExclusively = false
        }
        _ = flock(descriptor, LOCK_UN)
    }
}
