#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How large records are read and sealed on several threads: the window a frame body is read through, and how
/// many threads open the boxes of a large transaction (``WindowedRecordDecoder``) or seal them
/// (``RecordSealer``). Results, bytes written and errors are the same whatever the tuning; only the time differs.
///
/// ``current`` is task-local so that a test can force one tuning for the calls it makes (for example a
/// sequential replay or sealing to compare against) without changing it for tests running at the same time.
struct ParallelTuning: Sendable {
    /// Threads that open or seal boxes, the calling thread included; 1 does all the work on the calling thread.
    var workerCount: Int
    /// The fewest entries of a transaction, and the fewest boxes or entries in a window, for which other
    /// threads are used; fewer are handled on the calling thread, where they cost no hand-over.
    var minimumParallelEntries: Int
    /// The bytes of a frame body read at once (``FrameBodyReader``).
    ///
    /// A window's boxes are opened while the calling thread applies the window before (``WindowOpening``), and
    /// that overlap ends with each record: a compacted keychain's records of 4,096 items (~1.3 MB) read through
    /// 1 MiB windows gave a window and a remnant each, so the calling thread opened about half of every record's
    /// boxes itself (45% of the shares). With 256 KiB, five windows a record, the workers open 72% of them, and
    /// opens are faster (Docs/Performance.md).
    var windowSize: Int

    /// What replays and sealing use unless told otherwise: one worker per active processor (at most 8).
    static let automatic = ParallelTuning(
        workerCount: min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 8), minimumParallelEntries: 64,
        windowSize: 256 << 10)

    /// Every box opened by ``RecordDecoder``'s sequential loop, and every box sealed, on the calling thread.
    static let sequential = ParallelTuning(workerCount: 1, minimumParallelEntries: Int.max, windowSize: RecordEncoder.chunkSize)

    /// The tuning in effect for replays and sealing started by the current task.
    @TaskLocal static var current: ParallelTuning = .automatic

    /// Cuts jobs of the given weights into shares of about equal weight, a few per worker so that a thread
    /// delayed by others' work is made up for by the rest: the share bounds, `[0, …, weights.count]`. One
    /// share when there are too few jobs for another thread to be worth waking.
    func shareBounds(weights: [Int]) -> [Int] {
        guard workerCount > 1, weights.count >= max(minimumParallelEntries, 2) else { return [0, weights.count] }
        let shareCount = min(workerCount * 4, weights.count)
        let totalWeight = weights.reduce(0, +)
        var bounds = [0]
        bounds.reserveCapacity(shareCount + 1)
        var weight = 0
        for (index, jobWeight) in weights.enumerated() {
            weight += jobWeight
            // Close a share once the weight so far reaches its part of the total.
            if weight * shareCount >= totalWeight * bounds.count, index + 1 < weights.count, bounds.count < shareCount {
                bounds.append(index + 1)
            }
        }
        bounds.append(weights.count)
        return bounds
    }
}
