#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads lines from a file descriptor with read(2), keeping what it read past a line for the next call, so
/// that several secrets can come from one pipe: the keychain password's line, then the new password's line,
/// or everything after it as an item's secret (``readToEnd(limit:)``).
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

    /// Every byte left until the end of input, lines and all; `nil` when more than `limit` bytes are left
    /// (reading stops there, and what was read is wiped, so a huge input is never held whole).
    ///
    /// - Throws: `CommandError` with status `.io` if read(2) fails.
    func readToEnd(limit: Int) throws(CommandError) -> [UInt8]? {
        while !atEnd && buffer.count <= limit { try fill() }
        guard buffer.count <= limit else {
            wipe(&buffer)
            buffer = []
            return nil
        }
        let rest = buffer    // the caller owns (and wipes) these bytes now
        buffer = []
        return rest
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
            throw .failure("cannot read standard input: \(SystemError.describe(errno))", .io)
        }
    }
}

/// Overwrites the bytes of `bytes` with zeros (best effort: copies made earlier are not reached).
func wipe(_ bytes: inout [UInt8]) {
    for index in bytes.indices { bytes[index] = 0 }
}
