@_spi(KeychainFileInternals) import KeychainCrypto

/// The boxes of one window of a large transaction, opened by worker threads (``WindowWorkers``) while the
/// calling thread goes on; the calling thread joins in when it needs the outcomes (``finish(helping:_:)``).
///
/// ``WindowedRecordDecoder`` starts a window's opening as soon as the window is walked, then turns the
/// outcomes of the window before into entries and applies them to the index, and walks the next window, all
/// while the workers decrypt: those steps are the calling thread's own (the blocks an index keeps are made
/// there, see ``WindowedRecordDecoder/Outcome``) and used to wait for the decryption and leave the other
/// cores idle while they ran.
///
/// The jobs are cut into shares (``ParallelTuning/shareBounds(weights:)``), which threads claim one at a
/// time and open in order, each stopping at its first failure; so the outcomes, up to the first failure in
/// file order, are those of opening the jobs one after another.
///
/// `@unchecked Sendable`: the jobs, window and chain are immutable; `slots` is written by the thread that
/// claimed each share, at that share's indices only, and read by ``finish(helping:_:)`` after every share is
/// done, which the condition's lock orders after those writes; so are the parts of `plaintexts` each share's
/// puts are decrypted into (each put has a part of its own, and a view of it is made only once it is written);
/// `consumed` belongs to the thread calling ``finish(helping:_:)``; `nextShare` and `unfinishedShares` are only
/// touched under that lock.
final class WindowOpening<Digests: EntryDigests>: SharedWindow, @unchecked Sendable {
    typealias Job = WindowedRecordDecoder<Digests>.Job
    typealias Outcome = WindowedRecordDecoder<Digests>.Outcome

    /// The window the jobs' ranges index into (kept alive here while the reader loads the next).
    let window: [UInt8]
    /// The arena the puts' attributes are decrypted into, made on the calling thread (see ``ItemBytes``).
    let plaintexts: ItemBytes
    private let jobs: [Job]
    /// The tag of the box before the first job's first box.
    private let chain: [UInt8]
    private let record: RecordDecoder.RecordFields
    private let shares: [Int]
    private let slots: UnsafeMutableBufferPointer<Outcome?>
    /// How many slots, from the first, ``finish(helping:_:)`` has moved out (they are uninitialized now).
    private var consumed = 0
    private let condition = Condition()
    private var nextShare = 0
    private var unfinishedShares: Int

    /// Prepares the opening of `jobs`, cut into shares for `tuning.workerCount` threads. Nothing is opened
    /// until a thread calls ``openShares()``, ``openOneShare()`` or ``finish(helping:_:)``.
    init(
        jobs: [Job], in window: [UInt8], plaintexts: ItemBytes, after chain: [UInt8], record: RecordDecoder.RecordFields,
        tuning: ParallelTuning
    ) {
        self.window = window
        self.plaintexts = plaintexts
        self.jobs = jobs
        self.chain = chain
        self.record = record
        shares = tuning.shareBounds(weights: jobs.map(\.weight))
        slots = .allocate(capacity: jobs.count)
        slots.initialize(repeating: nil)
        unfinishedShares = shares.count - 1
    }

    /// Whether other threads are worth waking for these jobs: false when they make one share, which
    /// ``finish(helping:_:)`` opens on the calling thread.
    var wantsHelpers: Bool { shares.count > 2 }

    deinit {
        _ = UnsafeMutableBufferPointer(rebasing: slots[consumed...]).deinitialize()
        slots.deallocate()
    }

    /// Opens the shares not yet claimed, waits for those other threads are opening, and hands the outcomes to
    /// `body` in order, up to and including the first failure, moving each out of its slot rather than copying
    /// it. Stops at the first error `body` throws, and rethrows it. Called once.
    ///
    /// While another thread still opens a share of this window, the calling thread opens shares of `next` (the
    /// window walked after this one) instead of sleeping, one at a time, checking in between; it sleeps only
    /// when `next` has none left to claim. The total work is the same, and the calling thread, which alone makes
    /// the entries and applies them, is not idle while the workers have work it could take.
    func finish(helping next: WindowOpening<Digests>? = nil, _ body: (consuming Outcome) throws(FrameProblem) -> Void) throws(FrameProblem) {
        openShares()
        condition.lock()
        var helping = next
        while unfinishedShares > 0 {
            if let other = helping {
                condition.unlock()
                if !other.openOneShare() { helping = nil }
                condition.lock()
                continue
            }
            condition.wait()
        }
        condition.unlock()
        precondition(consumed == 0, "a window's outcomes are handed on once")
        let base = slots.baseAddress!
        while consumed < slots.count {
            guard let outcome = (base + consumed).move() else { preconditionFailure("a job skipped without an earlier failure") }
            consumed += 1
            var failed = false
            if case .failed = outcome { failed = true }
            try body(outcome)
            if failed { break }
        }
    }

    /// Waits for the shares other threads are opening and leaves the rest unopened: the outcomes are not
    /// wanted (a failure earlier in the file is being reported).
    func abandon() {
        condition.lock()
        unfinishedShares -= shares.count - 1 - nextShare
        nextShare = shares.count - 1
        while unfinishedShares > 0 { condition.wait() }
        condition.unlock()
    }

    /// Claims shares one at a time and opens each, until none is left: what a worker does with a window.
    func openShares() {
        while openOneShare() {}
    }

    /// Claims one share and opens it; false if none was left to claim.
    func openOneShare() -> Bool {
        guard let share = claimShare() else { return false }
        let base = slots.baseAddress!
        _ = WindowedRecordDecoder<Digests>.open(
            jobs, shares[share]..<shares[share + 1], in: window, plaintexts: plaintexts, after: chain, record: record
        ) {
            (base + $0).pointee = $1
        }
        condition.lock()
        unfinishedShares -= 1
        if unfinishedShares == 0 { condition.broadcast() }
        condition.unlock()
        return true
    }

    private func claimShare() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        guard nextShare < shares.count - 1 else { return nil }
        nextShare += 1
        return nextShare - 1
    }
}
