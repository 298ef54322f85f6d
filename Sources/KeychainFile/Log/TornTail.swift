/// What was ignored at the end of a file when it was opened: the final record, incomplete or unverifiable
/// (SPEC.md §9.2).
///
/// A tail that is a known crash remnant (``mayHoldAcknowledgedData`` false) is overwritten by the next write.
/// One that may hold acknowledged data — a whole final record that does not verify, with nothing to show it
/// was never acknowledged (SPEC.md §16.1) — is never cut off by a write: writes and rewrites fail until it is
/// repaired (``Keychain/repair(at:credential:keepingCopyAt:)``) or salvaged, and a recovering open
/// (``Keychain/OpenOptions/recover``) reads every item of it that still authenticates.
public struct TornTail: Sendable, Equatable, CustomStringConvertible {
    /// The byte offset where the ignored data starts: the end of the last whole record.
    public let offset: Int
    /// How many bytes were ignored.
    public let byteCount: Int
    /// Why the final record was not used.
    public let reason: String
    /// Whether the ignored bytes may hold a record that was acknowledged as committed and later damaged.
    public let mayHoldAcknowledgedData: Bool

    init(offset: Int, byteCount: Int, reason: String, mayHoldAcknowledgedData: Bool = false) {
        self.offset = offset
        self.byteCount = byteCount
        self.reason = reason
        self.mayHoldAcknowledgedData = mayHoldAcknowledgedData
    }

    public var description: String {
        let what = mayHoldAcknowledgedData
            ? "; it is a whole record and may hold committed items: nothing is written over it until it is repaired or salvaged"
            : ""
        return "ignored \(byteCount) bytes at offset \(offset): \(reason)\(what)"
    }
}
