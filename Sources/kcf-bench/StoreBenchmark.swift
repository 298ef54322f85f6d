#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import KeychainCrypto
import KeychainFile

/// `kcf-bench store`: the keychain's own operations at several sizes, on a real file in a temporary
/// directory, in the shapes `Scripts/compare-peers.sh` measures SQLite with.
///
/// Every item is a generic password with service, account, label, description, comment, creator and a
/// 32-byte secret (see ``BenchmarkItem``).
struct StoreBenchmark {
    /// Items at each size.
    let sizes: [Int]
    /// Single durable operations timed per size (adds, updates and deletes each).
    let durableOperations: Int
    /// Lookups timed per size.
    let lookups: Int
    /// Whether to print each phase's peak resident memory to stderr.
    var printingMemoryPhases = false
    /// The format version of the files measured.
    var formatVersion = 2

    /// One size's figures, in the order printed.
    struct Run {
        let items: Int
        var figures: [Figure] = []

        mutating func add(_ name: String, _ value: Double, _ unit: String) {
            figures.append(Figure(name: name, value: value, unit: unit))
        }
    }

    func run() throws -> [Run] {
        var runs: [Run] = []
        for size in sizes { runs.append(try measure(items: size)) }
        return runs
    }

    private func measure(items count: Int) throws -> Run {
        var run = Run(items: count)
        var memory = MemoryPhases(printing: printingMemoryPhases)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/bench.kcf"
        let key = Credential.key(SymmetricKey(size: .bits256))
        let options = Keychain.OpenOptions(autoCompaction: .disabled)

        // Bulk load: every item in one batch, one record, one fsync.
        do {
            var creation = Keychain.CreationOptions(autoCompaction: .disabled)
            creation.formatVersion = formatVersion
            let keychain = try Keychain.create(at: path, credential: key, options: creation)
            // Items are made inside the batch, one at a time, so that the benchmark does not hold every item
            // besides what the keychain holds (their making, about 1 µs each, is in the time).
            let start = monotonicNanoseconds()
            try keychain.batch { (batch) throws(KeychainError) in
                for index in 0..<count { _ = try batch.add(BenchmarkItem.make(index)) }
            }
            let elapsed = monotonicNanoseconds() - start
            run.add("bulk load (one batch)", Double(elapsed) / 1e6, "ms")
            run.add("bulk load per item", Double(elapsed) / 1e3 / Double(count), "µs")
            let statistics = try keychain.statistics()
            run.add("file bytes per item after bulk load", Double(statistics.fileSize) / Double(count), "B")
            memory.end("bulk load")
        }
        memory.end("bulk load's keychain closed")

        // Open with a raw key: header, then every record verified and decrypted into the index. Best of three.
        var opened: Keychain? = nil
        var bestOpen = UInt64.max
        var bestOpenCPU = UInt64.max
        for _ in 0..<3 {
            opened = nil
            let cpuStart = ResourceUsage.cpuNanoseconds()
            let start = monotonicNanoseconds()
            opened = try Keychain.open(at: path, credential: key, options: options)
            bestOpen = min(bestOpen, monotonicNanoseconds() - start)
            bestOpenCPU = min(bestOpenCPU, ResourceUsage.cpuNanoseconds() - cpuStart)
        }
        run.add("open (raw key, every record verified)", Double(bestOpen) / 1e6, "ms")
        run.add("open's CPU time (all threads)", Double(bestOpenCPU) / 1e6, "ms")
        memory.end("open ×3")
        guard let keychain = opened, keychain.count == count else { throw BenchmarkFailure("open lost items") }

        // Lookups of random existing items: the fastest of three passes over the same probes, as for open.
        var generator = SplitMix64(seed: UInt64(count))
        // Only the service and account of each probe are kept: whole items would count in the peak memory.
        let probes = (0..<lookups).map { _ in
            let item = BenchmarkItem.make(Int.random(in: 0..<count, using: &generator))
            return (service: item.service, account: item.account)
        }
        var bestFind = UInt64.max
        var bestRead = UInt64.max
        for _ in 0..<3 {
            var found = 0
            let start = monotonicNanoseconds()
            for probe in probes {
                let query = Query.genericPassword(service: probe.service, account: probe.account)
                found += try keychain.find(GenericPassword.self, matching: query, loadingValues: false).count
            }
            bestFind = min(bestFind, monotonicNanoseconds() - start)
            guard found == probes.count else { throw BenchmarkFailure("a lookup missed") }

            var secretBytes = 0
            let readStart = monotonicNanoseconds()
            for probe in probes {
                secretBytes += try keychain.data(forService: probe.service, account: probe.account).count
            }
            bestRead = min(bestRead, monotonicNanoseconds() - readStart)
            guard secretBytes == probes.count * BenchmarkItem.secretSize else { throw BenchmarkFailure("a secret is wrong") }
        }
        run.add("find by service and account", Double(bestFind) / 1e3 / Double(probes.count), "µs")
        run.add("read a secret by service and account", Double(bestRead) / 1e3 / Double(probes.count), "µs")
        memory.end("finds and reads")

        // Durable single operations: one record and one fsync each.
        let io = ResourceUsage.bytesWritten()
        let sizeBefore = try keychain.statistics().fileSize
        var times: [UInt64] = []
        for index in 0..<durableOperations {
            let item = BenchmarkItem.make(count + index)
            let start = monotonicNanoseconds()
            try keychain.add(item)
            times.append(monotonicNanoseconds() - start)
        }
        let written = ResourceUsage.bytesWritten() - io
        let sizeAfter = try keychain.statistics().fileSize
        run.add("durable add (mean)", mean(times) / 1e3, "µs")
        run.add("durable add (median)", median(times) / 1e3, "µs")
        run.add("bytes written per durable add", Double(written) / Double(durableOperations), "B")
        run.add("file growth per durable add", Double(sizeAfter - sizeBefore) / Double(durableOperations), "B")

        times = []
        for index in 0..<durableOperations {
            let item = BenchmarkItem.make(index)
            var secret = item.value ?? []
            secret[0] ^= 0xFF
            let start = monotonicNanoseconds()
            try keychain.update(.genericPassword(service: item.service, account: item.account), setting: [:], secret: secret)
            times.append(monotonicNanoseconds() - start)
        }
        run.add("durable update of the secret (mean)", mean(times) / 1e3, "µs")

        times = []
        for index in 0..<durableOperations {
            let item = BenchmarkItem.make(count + index)
            let start = monotonicNanoseconds()
            try keychain.delete(.genericPassword(service: item.service, account: item.account))
            times.append(monotonicNanoseconds() - start)
        }
        run.add("durable delete (mean)", mean(times) / 1e3, "µs")
        memory.end("durable adds, updates, deletes")

        // Compaction of what the updates and deletes left dead.
        let before = try keychain.statistics()
        run.add("file bytes per live item before compaction", Double(before.fileSize) / Double(before.itemCount), "B")
        let compactionStart = monotonicNanoseconds()
        let result = try keychain.compact()
        let compactionTime = monotonicNanoseconds() - compactionStart
        run.add("compaction", Double(compactionTime) / 1e6, "ms")
        let after = result.after
        run.add("file bytes per live item after compaction", Double(after.fileSize) / Double(after.itemCount), "B")
        run.add("file bytes over live bytes after compaction", Double(after.fileSize) / Double(max(after.liveBytes, 1)), "×")
        memory.end("compaction")
        run.add("peak resident memory", Double(memory.peak) / 1_048_576, "MiB")
        return run
    }

    /// The cost of opening with a password: PBKDF2-HMAC-SHA256 at the default 600,000 rounds, on an empty
    /// keychain so that nothing else counts.
    static func measurePasswordOpen() throws -> Double {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/kdf.kcf"
        _ = try Keychain.create(
            at: path, credential: .password("benchmark password"),
            options: Keychain.CreationOptions(passwordKeyDerivation: .pbkdf2(.standard)))
        var best = UInt64.max
        for _ in 0..<3 {
            let start = monotonicNanoseconds()
            _ = try Keychain.open(at: path, credential: .password("benchmark password"))
            best = min(best, monotonicNanoseconds() - start)
        }
        return Double(best) / 1e6
    }
}

func mean(_ values: [UInt64]) -> Double {
    values.isEmpty ? 0 : Double(values.reduce(0, +)) / Double(values.count)
}

func median(_ values: [UInt64]) -> Double {
    guard !values.isEmpty else { return 0 }
    return Double(values.sorted()[values.count / 2])
}

/// Prints the runs as aligned tables, or as one JSON document.
func printStoreRuns(_ runs: [StoreBenchmark.Run], passwordOpen: Double, formatVersion: Int, json: Bool) {
    let machine = machineDescription()
    if json {
        var sizes: [String] = []
        for run in runs {
            let figures = run.figures.map { figure in
                "      {\"name\": \(quoted(figure.name)), \"value\": \(formatJSON(figure.value)), \"unit\": \(quoted(figure.unit))}"
            }
            sizes.append("    {\"items\": \(run.items), \"figures\": [\n\(figures.joined(separator: ",\n"))\n    ]}")
        }
        print("""
            {
              "benchmark": "store",
              "machine": \(quoted(machine)),
              "format": \(formatVersion),
              "password open (600,000 PBKDF2 rounds) ms": \(formatJSON(passwordOpen)),
              "runs": [
            \(sizes.joined(separator: ",\n"))
              ]
            }
            """)
        return
    }
    print("kcf-bench store, format version \(formatVersion) — \(machine)")
    print("  open with a password (600,000 PBKDF2 rounds, empty keychain): \(formatValue(passwordOpen)) ms")
    let width = runs.first?.figures.map(\.name.count).max() ?? 0
    var header = "  " + String(repeating: " ", count: width)
    for run in runs { header += leftPadded("\(run.items) items", 16) }
    print(header)
    guard let first = runs.first else { return }
    for (row, figure) in first.figures.enumerated() {
        var line = "  " + figure.name + String(repeating: " ", count: width - figure.name.count)
        for run in runs { line += leftPadded("\(formatValue(run.figures[row].value)) \(figure.unit)", 16) }
        print(line)
    }
}

func leftPadded(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
}
