#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The peak resident memory of each phase of a benchmark: the peak is reset when a phase starts, so that
/// each phase reports its own; the largest of them is the peak of the whole run (a reset only lowers the
/// mark to the current size, which the phase before already reached).
struct MemoryPhases {
    /// Whether to print each phase to stderr as it ends (`kcf-bench store --memory-phases`).
    let printing: Bool
    private(set) var peak = 0
    /// When the first benchmark started: the times printed count from it.
    private static let processStart = monotonicNanoseconds()

    init(printing: Bool) {
        self.printing = printing
        _ = Self.processStart
        ResourceUsage.resetPeakResidentMemory()
    }

    /// Ends the phase that ran since the last call (or since `init`) and starts the next.
    mutating func end(_ phase: String) {
        let phasePeak = ResourceUsage.peakResidentBytes()
        peak = max(peak, phasePeak)
        if printing {
            let current = ResourceUsage.residentBytes()
            FileHandleStderr.write(
                "  memory: \(phase): peak \(mebibytes(phasePeak)) MiB, resident after \(mebibytes(current)) MiB, at \((Double(monotonicNanoseconds() - Self.processStart) / 1e6).rounded() / 1e3) s\n")
        }
        ResourceUsage.resetPeakResidentMemory()
    }

    private func mebibytes(_ bytes: Int) -> String {
        String((Double(bytes) / 1_048_576 * 10).rounded() / 10)
    }
}
