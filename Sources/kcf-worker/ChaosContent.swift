import KeychainFile

/// What an add or update writes: a secret (described by a text and a length), a label and a comment.
struct ChaosContent {
    let secretText: String
    let secretLength: Int
    let label: String
    let comment: String

    var word: String { "\(secretText):\(secretLength)/\(label)/\(comment)" }

    /// `secretText + "|"` repeated and cut to `secretLength` bytes.
    var secret: [UInt8] {
        let unit = Array((secretText + "|").utf8)
        return (0..<secretLength).map { unit[$0 % unit.count] }
    }
}
