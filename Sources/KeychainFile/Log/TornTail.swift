/// What was ignored at the end of a file when it was opened: the final record, incomplete or unverifiable
/// (a write interrupted by a crash). The next write overwrites it (SPEC.md §9.2).
public struct TornTail: Sendable, Equatable, CustomStringConvertible {
    /// The byte offset where the ignored data starts: the end of the last whole record.
    public let offset: Int
    /// How many bytes were ignored.
    public let byteCount: Int
    /// Why the final record was not used.
    public let reason: String

    public var description: String { "ignored \(byteCount) bytes at offset \(offset): \(reason)" }
}

/// The newest record of a keychain: its sequence number and chain value. An application can store it
/// elsewhere and compare it on the next open to detect a file rolled back to an older copy (SPEC.md §13).
public struct Head: Sendable, Hashable, CustomStringConvertible {
    /// The sequence number of the last record; 0 for a keychain without records.
    public let sequence: UInt64
    /// The chain value after the last record (16 bytes).
    public let chainValue: [UInt8]

    public var description: String {
        "sequence \(sequence), chain \(chainValue.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined())"
    }
}
