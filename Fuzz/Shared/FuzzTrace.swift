import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import KeychainFile

/// `FUZZ_TRACE=1` in the environment prints what each execution did (for `Scripts/fuzz.sh --reproduce`), to
/// standard error, unbuffered, so that the lines before a broken invariant's abort are there.
let tracing = ProcessInfo.processInfo.environment["FUZZ_TRACE"] == "1"

func trace(_ message: @autoclosure () -> String) {
    if tracing { fputs("fuzz: \(message())\n", stderr) }
}

extension Credential {
    var traceName: String {
        switch self {
        case .password: return "password"
        case .key: return "key"
        }
    }
}
