/// Why a DEFLATE (RFC 1951) or gzip (RFC 1952) stream cannot be inflated: nothing of it is used.
struct DeflateError: Error, CustomStringConvertible, Equatable {
    /// What is wrong, in words a person can act on.
    let reason: String

    init(_ reason: String) {
        self.reason = reason
    }

    var description: String { reason }
}
