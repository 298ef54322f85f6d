#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads lines from a file descriptor with read(2), keeping what it read past a line for the next call, so
/// that several secrets can come one per line from one pipe (the keychain password, then an item's).
final class LineReader {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var atEnd = false

    /// - Parameter descriptor: The descriptor to read, such as 0 for stdin.
    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { wipe(&buffer) }

    /// The next line without its `\n` (or `\r\n`), the last one even without a newline; `nil` at the end.
    ///
    /// - Throws: `CommandError` with status `.io` if read(2) fails.
    func nextLine() throws(CommandError) -> [UInt8]? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                var line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                if line.last == 0x0D { line.removeLast() }
                return line
            }
            if atEnd {
                guard !buffer.isEmpty else { return nil }
                let line = buffer
                wipe(&buffer)
                buffer = []
                return line
            }
            try fill()
        }
    }

    private func fill() throws(CommandError) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        defer { wipe(&chunk) }
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.append(contentsOf: chunk[..<count])
                return
            }
            if count == 0 {
                atEnd = true
                return
            }
            if errno == EINTR { continue }
            throw .failure("cannot read standard input: errno \(errno)", .io)
        }
    }
}

/// Overwrites the bytes of `bytes` with zeros (best effort: copies made earlier are not reached).
func wipe(_ bytes: inout [UInt8]) {
    for index in bytes.indices { bytes[index] = 0 }
}
