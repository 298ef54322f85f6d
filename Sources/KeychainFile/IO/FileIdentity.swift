#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file's identity on its device: two paths, or a path and an open descriptor, name the same file exactly
/// when their identities are equal.
struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64
}
