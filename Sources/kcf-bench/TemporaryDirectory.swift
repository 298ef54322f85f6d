#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import KeychainCrypto
import KeychainFile

/// A fresh directory under the system's temporary directory, removed with its contents.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array((FileManager.default.temporaryDirectory.path + "/kcf-bench-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchmarkFailure("mkdtemp failed") }
        path = String(cString: made)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
