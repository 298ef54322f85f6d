/// Damage the last read of a format version 2 file repaired from the file's redundancy (SPEC.md §20): header
/// copies that did not hold the verified header, and log bytes that parity corrected and the records' tags then
/// confirmed. Items are served as repaired; the next write puts the repaired bytes back on disk, after which the
/// report is empty. A version 1 file has no redundancy, and its report is always empty.
///
/// ```swift
/// let keychain = try Keychain.open(at: "secrets.kcf", credential: .password(pw))
/// if !keychain.repairs.isEmpty { print(keychain.repairs) }   // repaired 3 bytes in log chunk 0 (file bytes 32,768–98,047)
/// ```
public struct RepairReport: Sendable, Equatable, CustomStringConvertible {
    /// The header copies that were damaged, stale or missing: 0 for the first (at byte 0), 1 for the second.
    public let headerCopies: [Int]
    /// The log chunks whose bytes were repaired, each with the file's byte range it covers and how many of its
    /// bytes changed.
    public let chunks: [RepairedChunk]

    /// One log chunk whose bytes were repaired.
    public struct RepairedChunk: Sendable, Equatable {
        /// The chunk's number in the log.
        public let chunk: Int
        /// The bytes of the file the chunk's data occupies.
        public let fileRange: Range<Int>
        /// How many bytes of the chunk were corrected.
        public let changedBytes: Int
    }

    /// An empty report: nothing was repaired.
    public static let none = RepairReport(headerCopies: [], chunks: [])

    /// Whether nothing was repaired.
    public var isEmpty: Bool { headerCopies.isEmpty && chunks.isEmpty }

    /// How many log bytes were corrected in all.
    public var changedBytes: Int { chunks.reduce(0) { $0 + $1.changedBytes } }

    public var description: String {
        guard !isEmpty else { return "nothing repaired" }
        var parts: [String] = []
        if !headerCopies.isEmpty {
            let names = headerCopies.map { $0 == 0 ? "the first" : "the second" }.joined(separator: " and ")
            parts.append("\(names) header copy")
        }
        for chunk in chunks {
            parts.append(
                "\(chunk.changedBytes) bytes in log chunk \(chunk.chunk) (file bytes \(chunk.fileRange.lowerBound)–\(chunk.fileRange.upperBound - 1))")
        }
        return "repaired " + parts.joined(separator: ", ")
    }
}
