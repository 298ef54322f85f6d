#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `kcf` writes: results to stdout, prompts, warnings and errors to stderr.
///
/// Writes go straight to the file descriptors with write(2), unbuffered, so that nothing is lost when the
/// process exits and the two streams interleave in the order written.
enum Output {
    /// Writes `text` and a newline to stdout.
    static func line(_ text: String = "") {
        write(text + "\n", to: 1)
    }

    /// Writes `bytes` as they are to stdout (a secret that is not text).
    static func bytes(_ bytes: [UInt8]) {
        write(bytes, to: 1)
    }

    /// Writes `text` and a newline to stderr.
    static func error(_ text: String) {
        write(text + "\n", to: 2)
    }

    /// Writes `text` as it is to stderr (a prompt).
    static func prompt(_ text: String) {
        write(text, to: 2)
    }

    private static func write(_ text: String, to descriptor: Int32) {
        write(Array(text.utf8), to: descriptor)
    }

    /// Writes all of `bytes`, retrying after short writes and EINTR; gives up silently on other errors
    /// (a closed pipe), as there is nowhere left to report them.
    static func write(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}

/// write(2), under a name that does not clash with ``Output``'s own methods.
private func systemWrite(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, pointer, count)
}
