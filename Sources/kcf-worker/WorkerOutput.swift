import Foundation

/// The worker's exit statuses.
enum WorkerExit {
    static let success: Int32 = 0
    static let usage: Int32 = 1
    static let keychainError: Int32 = 2
    static let checkFailed: Int32 = 3
}

/// Writes one line to stdout, unbuffered (one write(2)), so that a line is out before the next step starts.
func acknowledge(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Writes one line to stderr, unbuffered.
func report(_ line: String) {
    FileHandle.standardError.write(Data(("kcf-worker: " + line + "\n").utf8))
}

/// A failed consistency check: the keychain answered, but not with what was written.
struct CheckFailure: Error, CustomStringConvertible {
    let description: String
}
