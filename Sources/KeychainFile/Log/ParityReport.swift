/// What a parity scrub of a format version 2 file found (``Keychain/checkParity()``) or rewrote
/// (``Keychain/repairParity(keepingCopyAt:)``): the log chunks whose stored parity does not match the records it
/// protects (SPEC.md §19.5). Such parity costs no data while the records verify — parity is never trusted — but
/// it would not repair a later fault in its chunk. A version 1 file has no parity, and its report is ``none``.
///
/// ```swift
/// let parity = try keychain.checkParity()
/// for stale in parity.staleChunks { print(stale) }   // log chunk 1 (data at file bytes 98048–155135): parity at …
/// ```
public struct ParityReport: Sendable, Equatable, CustomStringConvertible {
    /// One log chunk whose stored parity does not match its records.
    public struct StaleChunk: Sendable, Equatable, CustomStringConvertible {
        /// The chunk's number in the log.
        public let chunk: Int
        /// The bytes of the file the chunk's data occupies.
        public let dataRange: Range<Int>
        /// The bytes of the file its stored parity occupies: right after the data for a complete chunk; in the
        /// newest commit slot for the last, partial chunk (``isInCommitSlot``).
        public let parityRange: Range<Int>
        /// Whether this is the last chunk's parity, kept in the newest commit slot — rewritten by a new commit of the
        /// same records — rather than after the chunk's data.
        public let isInCommitSlot: Bool
        /// How many of its 8,192 stored parity bytes differ from the parity of its records, or could not be read.
        public let differingBytes: Int

        public var description: String {
            "log chunk \(chunk) (data at file bytes \(Self.text(dataRange))): parity at file bytes \(Self.text(parityRange))"
                + "\(isInCommitSlot ? " (the newest commit slot)" : ""), \(differingBytes) of its \(parityRange.count) bytes differing from "
                + "the parity of its records"
        }

        private static func text(_ range: Range<Int>) -> String { "\(range.lowerBound)–\(range.upperBound - 1)" }
    }

    /// How many chunks had their parity compared with their records: every chunk whose records all verified and
    /// whose bytes could be read.
    public let checkedChunks: Int
    /// The chunks whose stored parity did not match their records, in log order.
    public let staleChunks: [StaleChunk]
    /// Chunks whose records verified but whose bytes could not all be read now (EIO): their parity was not
    /// compared, and is never computed from bytes that did not read.
    public let unreadableChunks: [Int]
    /// Whether the parity of ``staleChunks`` was rewritten (``Keychain/repairParity(keepingCopyAt:)``), rather than
    /// only found.
    public let rewritten: Bool

    /// Nothing checked: the report for a version 1 file, which has no parity.
    public static let none = ParityReport(checkedChunks: 0, staleChunks: [], unreadableChunks: [], rewritten: false)

    /// Whether every chunk whose records verified was compared, and its parity matched.
    public var isClean: Bool { staleChunks.isEmpty && unreadableChunks.isEmpty }

    public var description: String {
        var parts: [String] = []
        if staleChunks.isEmpty {
            parts.append("the parity of \(checkedChunks) chunk\(checkedChunks == 1 ? "" : "s") matches the records")
        } else {
            parts.append((rewritten ? "rewrote the parity of " : "stale parity in ") + staleChunks.map(\.description).joined(separator: "; "))
        }
        if !unreadableChunks.isEmpty {
            let chunks = unreadableChunks.map(String.init).joined(separator: ", ")
            parts.append("log chunk\(unreadableChunks.count == 1 ? "" : "s") \(chunks) could not all be read, so \(unreadableChunks.count == 1 ? "its" : "their") parity was not compared")
        }
        return parts.joined(separator: "; ")
    }
}
