import KeychainFile

/// `kcf-bench open-v2`: opening a format version 2 log of the store benchmark's items from memory, every page
/// decrypted and every secret's digest and tag checked (`OpenProbeV2`), on one thread and on two, with the peak resident
/// memory. No file and no index: it measures the record layout alone, before version 2 is read by `Keychain`
/// (`kcf-bench store` measures version 1's whole open in the same way of counting).
func runOpenV2Benchmark(sizes: [Int], trials: Int = 5) throws {
    var report = Report(title: "kcf-bench open-v2 (records only, in memory)", machine: machineDescription())
    for size in sizes {
        let items = (0..<size).map(BenchmarkItem.make)
        ResourceUsage.resetPeakResidentMemory()
        let before = ResourceUsage.residentBytes()
        let probe = try OpenProbeV2(items: items)
        report.add("\(size) items: log size", Double(probe.byteCount) / 1_048_576, "MiB")
        report.add("\(size) items: records", Double(probe.recordCount), "")
        for threads in [1, 2] {
            var timings: [Double] = []
            var cpu: [Double] = []
            for _ in 0..<trials {
                let start = monotonicNanoseconds()
                let cpuStart = ResourceUsage.cpuNanoseconds()
                let found = try probe.open(threads: threads)
                timings.append(Double(monotonicNanoseconds() - start) / 1e6)
                cpu.append(Double(ResourceUsage.cpuNanoseconds() - cpuStart) / 1e6)
                guard found == size else { throw BenchmarkFailure("open-v2 found \(found) of \(size) items") }
            }
            timings.sort()
            cpu.sort()
            report.add("\(size) items: open, \(threads) thread\(threads == 1 ? "" : "s") (CPU time, median)", cpu[trials / 2], "ms")
            report.add("\(size) items: open, \(threads) thread\(threads == 1 ? "" : "s") (median of \(trials))", timings[trials / 2], "ms")
            report.add("\(size) items: open, \(threads) thread\(threads == 1 ? "" : "s") (best)", timings[0], "ms")
        }
        report.add("\(size) items: peak resident above the start", Double(ResourceUsage.peakResidentBytes() - before) / 1_048_576, "MiB")
    }
    report.print(json: false)
}
