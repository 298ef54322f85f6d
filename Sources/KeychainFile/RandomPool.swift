#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(KeychainFileInternals) import KeychainCrypto

/// 256 bytes from the kernel's generator, handed out 8 at a time and wiped once used or discarded.
///
/// `@unchecked Sendable` through ``RandomSource``: used only under the keychain's lock.
final class RandomPool {
    private static let size = 256 // getentropy's largest request
    private let bytes = UnsafeMutableRawPointer.allocate(byteCount: RandomPool.size, alignment: 8)
    /// Bytes before `offset` are used (and zeroed); `size` means empty.
    private var offset = RandomPool.size

    init() { wipe(0..<Self.size) }

    deinit {
        wipe(0..<Self.size)
        bytes.deallocate()
    }

    private func wipe(_ range: Range<Int>) {
        secureZeroMemory(UnsafeMutableRawBufferPointer(start: bytes + range.lowerBound, count: range.count))
    }

    /// The next 8 bytes, or `nil` if the kernel refused to fill the pool (the caller then asks the system
    /// generator directly).
    func next() -> UInt64? {
        if offset == Self.size {
            guard getentropy(bytes, Self.size) == 0 else { return nil }
            offset = 0
        }
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        wipe(offset..<(offset + 8))
        offset += 8
        return value
    }

    func discard() {
        guard offset < Self.size else { return }
        wipe(offset..<Self.size)
        offset = Self.size
    }
}
