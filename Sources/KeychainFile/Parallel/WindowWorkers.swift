import Dispatch
@_spi(KeychainFileInternals) import KeychainCrypto

/// The threads that open the windows of one large record beside the calling thread: started once for the
/// record and handed each window as it is walked (``post(_:)``), instead of one Dispatch block per window.
///
/// A block per window cost the calling thread a large share of a large open in `DispatchQueue.async` itself
/// (Docs/Performance.md), and it could run beside the block of the window before, one thread more than there
/// are cores. Here a worker
/// that runs out of shares sleeps until the next window is posted, and there are never more than
/// ``ParallelTuning/workerCount`` − 1.
///
/// A worker always takes the newest window posted: by the time it has claimed the last share of one window,
/// the calling thread has usually posted the next and will open what is left of the older one itself
/// (``WindowOpening/finish(helping:_:)``). A window a worker never reaches is opened by the calling thread; the outcomes
/// do not depend on which thread opened what.
///
/// ``close()`` waits only for workers that are opening a share, never for one that has not started: a worker
/// is a block on Dispatch's global queue, and if every thread of that pool were taken (by opens waiting in
/// `close()`, say), waiting for blocks still queued would never end. A worker that starts after `close()`
/// returns at once and touches no window.
///
/// `@unchecked Sendable`: `newest`, `generation`, `closed` and `busy` are only touched under `condition`'s lock.
final class WindowWorkers: @unchecked Sendable {
    private let condition = Condition()
    /// Opens the shares of the window posted last, until the workers stop. A closure made where the window's
    /// type is known, so that the workers run the decoder specialized for it: through `any SharedWindow` they
    /// ran its unspecialized generic code (Docs/Performance.md).
    private var newest: (@Sendable () -> Void)? = nil
    /// How many windows have been posted: a worker takes `newest` when this passes the count it last saw.
    private var generation = 0
    private var closed = false
    /// Workers that hold a window: opening its shares, or about to find none left.
    private var busy = 0

    /// Starts `count` workers (at least one), which wait for windows.
    ///
    /// - Parameters:
    ///   - count: How many workers.
    ///   - start: Runs a worker's loop on a thread of its own; by default a block on Dispatch's global queue.
    init(count: Int, start: (@escaping @Sendable () -> Void) -> Void = { DispatchQueue.global().async(execute: $0) }) {
        precondition(count >= 1, "at least one worker")
        for _ in 0..<count {
            start { self.work() }
        }
    }

    /// Hands `opening` to the workers: each that is waiting wakes and claims its shares.
    ///
    /// - Precondition: ``close()`` has not been called.
    func post(_ opening: some SharedWindow) {
        let openShares: @Sendable () -> Void = { opening.openShares() }
        condition.lock()
        precondition(!closed, "a window posted to closed workers")
        newest = openShares
        generation += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the workers: waits until each that holds a window has finished the share it was opening; those
    /// waiting for a window, and those not started yet, return without touching one. No thread touches a
    /// window after this.
    func close() {
        condition.lock()
        closed = true
        newest = nil
        condition.broadcast()
        while busy > 0 { condition.wait() }
        condition.unlock()
    }

    /// A worker's loop: wait for a window newer than the last one taken, open shares of it until none is left,
    /// and again, until ``close()``.
    private func work() {
        var seen = 0
        while true {
            condition.lock()
            while generation == seen && !closed { condition.wait() }
            // Optional so that it can be dropped before `busy` falls (below).
            var opening: (@Sendable () -> Void)? = closed ? nil : newest
            guard opening != nil else {
                condition.unlock()
                return
            }
            seen = generation
            busy += 1
            condition.unlock()
            opening?()
            // Dropped before `busy` falls, so that a window's last reference never goes (and its memory is never
            // freed) on this thread after `close()` has returned.
            opening = nil
            condition.lock()
            busy -= 1
            if busy == 0 && closed { condition.broadcast() }
            condition.unlock()
        }
    }
}
