#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `kcf-bench write-pattern`: what one durable change costs the disk in each way of committing it, with the
/// same record size, on real files, the patterns interleaved so that each sees the disk in the same state:
///
/// - `one flush`: the record appended, one `fdatasync` (format version 1 before the lock file acknowledged
///   each change);
/// - `record + acknowledgement`: the record, `fdatasync`, then the 92-byte acknowledgement in the lock file
///   and its `fdatasync` (format version 1 today, SPEC.md §16.1);
/// - `record + commit slot`: the record and an 8,448-byte commit slot (two fixed slots used alternately),
///   one `fdatasync` (the design of format version 2, Docs/FormatVersion2.md §3);
/// - `record, flush, slot, flush`: the same with a flush after each (the design's rule for large records).
///
/// The question it answers is whether the design of version 2 brings durable add back under SQLite's.
struct WritePatternBenchmark {
    let operations: Int
    let recordBytes = 350
    let slotBytes = 8_448

    struct Pattern {
        let name: String
        let step: (_ files: Files, _ index: Int) throws -> Void
    }

    /// One pattern's files: the keychain file and its lock file.
    final class Files {
        let log: Int32
        let lock: Int32
        var end: Int

        init(directory: String, name: String, prefix: Int) throws {
            log = open(directory + "/" + name + ".kcf", O_RDWR | O_CREAT | O_TRUNC, 0o600)
            lock = open(directory + "/" + name + ".kcf.lock", O_RDWR | O_CREAT | O_TRUNC, 0o600)
            guard log >= 0, lock >= 0 else { throw BenchmarkFailure("open failed: errno \(errno)") }
            end = prefix
            let zeros = [UInt8](repeating: 0, count: prefix)
            try Self.write(log, zeros, at: 0)
            try Self.write(lock, [UInt8](repeating: 0, count: 100), at: 0)
            guard fsync(log) == 0, fsync(lock) == 0 else { throw BenchmarkFailure("fsync failed: errno \(errno)") }
        }

        static func write(_ descriptor: Int32, _ bytes: [UInt8], at offset: Int) throws {
            let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
            guard written == bytes.count else { throw BenchmarkFailure("pwrite wrote \(written) of \(bytes.count): errno \(errno)") }
        }

        static func flush(_ descriptor: Int32) throws {
            guard fdatasync(descriptor) == 0 else { throw BenchmarkFailure("fdatasync failed: errno \(errno)") }
        }

        deinit {
            close(log)
            close(lock)
        }
    }

    func run() throws -> [(name: String, mean: Double, median: Double)] {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var random = SplitMix64(seed: 1)
        let record = (0..<recordBytes).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let slot = (0..<slotBytes).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let acknowledgement = [UInt8](repeating: 0xA5, count: 92)
        let prefix = 4_096 + 2 * slotBytes + 4_096
        let patterns: [Pattern] = [
            Pattern(name: "one flush (v1 before the acknowledgement)") { files, _ in
                try Files.write(files.log, record, at: files.end)
                files.end += record.count
                try Files.flush(files.log)
            },
            Pattern(name: "record + acknowledgement, two flushes (v1 now)") { files, _ in
                try Files.write(files.log, record, at: files.end)
                files.end += record.count
                try Files.flush(files.log)
                try Files.write(files.lock, acknowledgement, at: 8)
                try Files.flush(files.lock)
            },
            Pattern(name: "record + commit slot, one flush (v2 design)") { files, index in
                try Files.write(files.log, record, at: files.end)
                files.end += record.count
                try Files.write(files.log, slot, at: 4_096 + (index % 2) * slotBytes)
                try Files.flush(files.log)
            },
            Pattern(name: "record, flush, slot, flush (v2, large records)") { files, index in
                try Files.write(files.log, record, at: files.end)
                files.end += record.count
                try Files.flush(files.log)
                try Files.write(files.log, slot, at: 4_096 + (index % 2) * slotBytes)
                try Files.flush(files.log)
            },
        ]
        let files = try patterns.indices.map { try Files(directory: directory.path, name: "pattern\($0)", prefix: prefix) }
        var samples = [[UInt64]](repeating: [], count: patterns.count)
        // A few unmeasured rounds first, then every pattern once per round, in turn.
        for round in 0..<(operations + 10) {
            for (index, pattern) in patterns.enumerated() {
                let start = monotonicNanoseconds()
                try pattern.step(files[index], round)
                let elapsed = monotonicNanoseconds() - start
                if round >= 10 { samples[index].append(elapsed) }
            }
        }
        return patterns.indices.map { (patterns[$0].name, mean(samples[$0]) / 1_000, median(samples[$0]) / 1_000) }
    }
}

/// Prints the write-pattern figures, in microseconds per durable change.
func printWritePatterns(_ rows: [(name: String, mean: Double, median: Double)], operations: Int) {
    func tenths(_ value: Double) -> String {
        let scaled = Int((value * 10).rounded())
        return "\(scaled / 10).\(scaled % 10)"
    }
    func padded(_ text: String) -> String { text + String(repeating: " ", count: max(0, 50 - text.count)) }
    print("kcf-bench write-pattern — \(machineDescription()) — \(operations) durable changes of 350 B each, interleaved")
    print("  " + padded("pattern") + leftPadded("mean µs", 10) + leftPadded("median µs", 11))
    for row in rows {
        print("  " + padded(row.name) + leftPadded(tenths(row.mean), 10) + leftPadded(tenths(row.median), 11))
    }
}
