#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The environment variables `kcf` reads, read byte for byte with getenv(3).
///
/// Not from `ProcessInfo.environment`: it splits each `NAME=VALUE` entry at the first `=` *Character*, and a
/// value that begins with a combining mark (U+0301, U+0903, U+0CCA, …) joins that `=` into one Character, so
/// the entry was dropped and a `KCF_PASSWORD` such as "\u{301}…" read as unset.
enum ProcessEnvironment {
    /// Every variable `kcf` reads.
    static let names = [
        SecretInput.passwordVariable, KeychainLocation.variable, CommandContext.keepFormatVersionVariable,
        CommandContext.keyDerivationMemoryVariable, "HOME", "XDG_DATA_HOME",
    ]

    /// The variables of ``names`` that are set, each with its exact value.
    ///
    /// - Throws: `CommandError` with status `.invalidParameter` when one of them is not valid UTF-8 (a
    ///   password or a path that a `String` cannot hold unchanged).
    static func current() throws(CommandError) -> [String: String] {
        var variables: [String: String] = [:]
        for name in names {
            guard let pointer = getenv(name) else { continue }
            let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))
            guard let value = String(validating: bytes, as: UTF8.self) else {
                throw .failure("$\(name) is not valid UTF-8; set it to UTF-8 text", .invalidParameter)
            }
            variables[name] = value
        }
        return variables
    }
}
