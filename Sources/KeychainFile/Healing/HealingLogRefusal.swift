/// Why a ``HealingLog`` refuses appends, and what lifts the refusal.
enum HealingLogRefusal: Equatable, Sendable, CustomStringConvertible {
    /// The file is shorter than the newest commit says: its slot reached the disk before the last write's
    /// bytes and the file's new size did (Docs/FormatVersion2.md §3 rule 4).
    case lastWriteMissing
    /// No commit slot reads, and the log holds bytes past its rewrite end that may have been acknowledged.
    case noCommitSlot
    /// Part of the last chunk could not be read.
    case tailUnreadable
    /// The last chunk's bytes do not match the parity the newest slot stored.
    case tailMismatch
    /// The newest slot's head is not the one the records give at its committed end: it belongs to a history
    /// that was cut and written over (a fork, §3).
    case forkedNewestSlot
    /// A write failed after it began: what reached the disk is unknown until the log is opened again.
    case failedWrite(String)

    /// Whether the last chunk's bytes caused it: then new parity for that chunk from bytes the caller verified
    /// lifts it — a confirmed repair of the whole chunk (``HealingLog/writeBack(_:)``), or a cut
    /// (``HealingLog/cut(to:)``).
    var concernsLastChunk: Bool {
        switch self {
        case .lastWriteMissing, .tailUnreadable, .tailMismatch: return true
        case .noCommitSlot, .forkedNewestSlot, .failedWrite: return false
        }
    }

    var description: String {
        switch self {
        case .lastWriteMissing: return "the last write did not reach the disk whole; repair the log first"
        case .noCommitSlot: return "no commit slot reads, and the log holds bytes past its rewrite; repair it first"
        case .tailUnreadable: return "the log's last chunk could not be read; repair it first"
        case .tailMismatch: return "the log's last chunk does not match its parity; repair it first"
        case .forkedNewestSlot:
            return "the newest commit slot's head is not the records' at its committed end (a slot of a history that was cut); repair the log"
        case .failedWrite(let error): return "an earlier write failed after it began (\(error)); open the log again"
        }
    }
}
