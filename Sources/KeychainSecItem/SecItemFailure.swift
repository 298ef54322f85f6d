import KeychainFile

/// Why a SecItem call failed: the status it returns, and what was wrong (for debugging; the public functions
/// return only the status, as Apple's do).
struct SecItemFailure: Error, CustomStringConvertible {
    /// The status the public function returns.
    let status: OSStatus
    /// What was wrong.
    let reason: String

    init(_ status: OSStatus, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    /// A failure of the typed library, with the library's OSStatus-compatible code.
    init(_ error: KeychainError) {
        self.init(error.code, error.description)
    }

    /// An invalid parameter (errSecParam).
    static func parameter(_ reason: String) -> SecItemFailure {
        SecItemFailure(errSecParam, reason)
    }

    var description: String { "\(status): \(reason)" }
}

extension SecItemFailure {
    /// Runs a call into the typed library, turning its error into a failure.
    static func library<Result>(_ body: () throws(KeychainError) -> Result) throws(SecItemFailure) -> Result {
        do {
            return try body()
        } catch {
            throw SecItemFailure(error)
        }
    }
}
