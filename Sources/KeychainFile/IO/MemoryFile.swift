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
