#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a replay reads large records: the window a frame body is read through, and how many threads open
/// the boxes of a large transaction (``WindowedRecordDecoder``). Results and errors are the same whatever
/// the tuning; only the time differs.
///
/// ``current`` is task-local so that a test can force one tuning for the calls it makes (for example a
/// sequential replay to compare against) without changing it for tests running at the same time.
struct ReplayTuning: Sendable {
    /// Threads that open boxes, the calling thread included; 1 opens every box on the calling thread.
    var workerCount: Int
    /// The fewest entries of a transaction, and the fewest boxes in a window, for which other threads are
    /// used; fewer are opened on the calling thread, where they cost no hand-over.
    var minimumParallelEntries: Int
    /// The bytes of a frame body read at once (``FrameBodyReader``).
    var windowSize: Int

    /// What a replay uses unless told otherwise: one worker per active processor (at most 8).
    static let automatic = ReplayTuning(
        workerCount: min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 8), minimumParallelEntries: 64,
        windowSize: RecordEncoder.chunkSize)

    /// Every box opened on the calling thread, by ``RecordDecoder``'s sequential loop.
    static let sequential = ReplayTuning(workerCount: 1, minimumParallelEntries: Int.max, windowSize: RecordEncoder.chunkSize)

    /// The tuning in effect for replays started by the current task.
    @TaskLocal static var current: ReplayTuning = .automatic
}
