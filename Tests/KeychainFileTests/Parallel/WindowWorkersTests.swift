import Foundation
import Testing
@testable import KeychainFile

/// ``WindowWorkers``: closing never waits for a worker that has not started, so that opens cannot deadlock when
/// every thread of Dispatch's pool is taken.
@Suite("Workers that open a record's windows")
struct WindowWorkersTests {
    /// Worker loops handed to `start`, kept instead of run.
    final class HeldStarts: @unchecked Sendable {
        // `@unchecked Sendable`: only touched under `lock`.
        private let lock = NSLock()
        private var loops: [@Sendable () -> Void] = []

        func hold(_ loop: @escaping @Sendable () -> Void) {
            lock.lock()
            loops.append(loop)
            lock.unlock()
        }

        func take() -> [@Sendable () -> Void] {
            lock.lock()
            defer { lock.unlock() }
            return loops
        }
    }

    @Test("Closing returns while no worker has started, and a worker started after that returns at once")
    func closeDoesNotWaitForUnstartedWorkers() async throws {
        let held = HeldStarts()
        let workers = WindowWorkers(count: 3) { held.hold($0) }
        #expect(held.take().count == 3)
        // Closed on a thread of its own, so that a `close()` waiting for workers that never run fails this test
        // instead of hanging the suite.
        let closed = HeldStarts()
        Thread.detachNewThread {
            workers.close()
            closed.hold {}
        }
        let deadline = Date().addingTimeInterval(20)
        while closed.take().isEmpty && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(closed.take().count == 1, "close() did not return within 20 s while no worker had started")
        // Started late, on this thread: each sees the workers closed and returns without waiting for a window.
        for loop in held.take() { loop() }
    }

    @Test("Closing wakes workers waiting for a window, and they return", .timeLimit(.minutes(1)))
    func closeWakesWaitingWorkers() async throws {
        let finished = HeldStarts()
        let workers = WindowWorkers(count: 2) { loop in
            Thread.detachNewThread {
                loop()
                finished.hold {}
            }
        }
        // Let the workers reach their wait for a window (if they have not, they find the workers closed instead).
        try await Task.sleep(for: .milliseconds(50))
        workers.close()
        while finished.take().count < 2 { try await Task.sleep(for: .milliseconds(5)) }
    }
}
