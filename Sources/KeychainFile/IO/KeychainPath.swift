#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Paths beside a keychain's file, and what is at them.
enum KeychainPath {
    /// What the symbolic link at `path` points to, made absolute against the link's directory when relative
    /// (for messages only).
    static func linkTarget(of path: String) -> String {
        var buffer = [CChar](repeating: 0, count: 4_096)
        let count = buffer.withUnsafeMutableBufferPointer { readlink(path, $0.baseAddress!, $0.count) }
        guard count > 0 else { return "(unreadable)" }
        let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.hasPrefix("/") ? target : directoryName(of: path) + "/" + target
    }
}
