#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Overwrites `count` bytes at `pointer` with zeros in a way the optimiser may not remove, even when the
/// memory is freed immediately afterwards.
///
/// Uses `explicit_bzero` (glibc, musl) or `memset_s` (Darwin), which exist for exactly this purpose.
/// Best effort: copies the compiler made elsewhere (registers, spilled temporaries) are not reached.
func secureZero(_ pointer: UnsafeMutableRawPointer, count: Int) {
    guard count > 0 else { return }
    #if canImport(Glibc) || canImport(Musl)
    explicit_bzero(pointer, count)
    #elseif canImport(Darwin)
    _ = memset_s(pointer, count, 0, count)
    #else
    // No dedicated primitive: a volatile-like loop through an opaque pointer.
    let bytes = pointer.assumingMemoryBound(to: UInt8.self)
    for index in 0..<count { bytes.advanced(by: index).pointee = 0 }
    #endif
}

/// Overwrites `buffer` with zeros in a way the optimiser may not remove (see `secureZero`). For the
/// KeychainFile module, which holds secrets in its own buffers.
@_spi(KeychainFileInternals)
public func secureZeroMemory(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress else { return }
    secureZero(base, count: buffer.count)
}
