#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An errno value as kcf's messages say it: the system's text, then the number — "Not a directory (errno 20)",
/// as the library's I/O errors do — so that a failed system call reads as a reason a person can act on.
enum SystemError {
    /// The text of `code`, such as `Permission denied (errno 13)`.
    ///
    /// For example:
    /// ```swift
    /// throw .failure("cannot create the directory \(directory): \(SystemError.describe(errno))", .io)
    /// ```
    static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return "\(String(cString: text)) (errno \(code))"
    }
}
