#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The first bytes of a keychain file, read without opening it as a keychain: its magic number and format
/// version (SPEC.md §4), which every version of the format keeps at the same place.
struct KeychainFilePrefix {
    /// `\x89KCF\r\n\x1a\n`.
    static let magic: [UInt8] = [0x89, 0x4B, 0x43, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The format version, bytes 8–9, big-endian.
    let version: Int

    /// Reads the prefix of the file at `path`.
    ///
    /// - Returns: `nil` when the file starts with something else than the magic number (or is shorter).
    /// - Throws: `CommandError` with status `.io` when the file cannot be opened or read.
    static func read(_ path: String) throws(CommandError) -> KeychainFilePrefix? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .failure("cannot open \(path): \(String(cString: strerror(errno)))", .io) }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 10)
        var count = 0
        while count < bytes.count {
            let read = bytes.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress! + count, $0.count - count) }
            if read < 0 && errno == EINTR { continue }
            guard read >= 0 else { throw .failure("cannot read \(path): \(String(cString: strerror(errno)))", .io) }
            if read == 0 { break }
            count += read
        }
        guard count == bytes.count, Array(bytes[0..<8]) == magic else { return nil }
        return KeychainFilePrefix(version: Int(bytes[8]) << 8 | Int(bytes[9]))
    }
}

/// read(2), under a name that does not clash with ``KeychainFilePrefix/read(_:)``.
private func systemRead(_ descriptor: Int32, _ pointer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, pointer, count)
}
