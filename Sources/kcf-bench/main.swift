#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// kcf-bench: the project's benchmarks. Run release builds only:
///
///     swift run -c release kcf-bench crypto [--json] [--seconds S]
///     swift run -c release kcf-bench ct [--calls N] [--only TEXT]
///     swift run -c release kcf-bench store [--json] [--items N…] [--format 1|2|3]
///     swift run -c release kcf-bench reed-solomon [--json] [--seconds S] [--megabytes M]
///     swift run -c release kcf-bench write-pattern [--operations N]
///     swift run -c release kcf-bench open-v2 [--items N…]
///     swift run -c release kcf-bench kdf-open [--trials N]
///     swift run -c release kcf-bench merge [--items N…] [--differing N] [--format 2|3]
let usage = """
    usage: kcf-bench <command> [options]

    commands:
      crypto   throughput of SHA-256, HMAC, PBKDF2, HKDF, Argon2id, AES-256-GCM and X25519
      ct       dudect-style timing-leakage check of AES-256, AES-GCM and X25519
      store    the keychain's operations at 1,000, 10,000, 100,000 and 1,000,000 items (compare-peers.sh
               runs SQLite beside it)
      reed-solomon
               RS(255,223) encode and decode throughput (compare-reedsolo.sh runs Python's
               reedsolo beside it)
      open-v2  opening format version 2 records of the store benchmark's items from memory, every box
               verified, on one and two threads (--items; default 1000 100000 1000000)
      kdf-open opening an empty version 2 keychain whose only slot is a password's, with the real KDF:
               Argon2id (64 MiB, 3 passes, 4 lanes) beside PBKDF2 (600,000 rounds), alternated (--trials)
      merge    merging two copies of one keychain that differ in --differing items (default 1000), beside
               opening each copy (--items; default 100000)
      write-pattern
               what one durable change costs in each way of committing it (compare-write-patterns.sh
               runs SQLite's durable insert beside it)

    options:
      --json         machine-readable output (crypto, reed-solomon)
      --seconds S    measuring time per figure (crypto, reed-solomon; default 1)
      --megabytes M  MiB of data to encode (reed-solomon; default 64)
      --only TEXT    only the measurements or checks whose name contains TEXT (crypto, ct)
      --calls N      timed calls per class (ct; default 1000000)
      --items N…     item counts (store; default 1000 10000 100000 1000000)
      --operations N durable adds, updates and deletes timed per size (store; default 200), or
                     durable changes per pattern (write-pattern)
      --trials N     opens timed per KDF (kdf-open; default 7)
      --lookups N    finds and secret reads timed per size (store; default 20000)
      --skip-kdf     do not time opening with a password (store; for profiling)
      --memory-phases print each phase's peak resident memory to stderr (store)
      --format N     the format version of the files measured (store; 1, 2 or 3; merge: 2 or 3; default 2)
      --differing N  items the two copies differ in (merge; default 1000)
    """

func fail(_ message: String) -> Never {
    FileHandleStderr.write("kcf-bench: \(message)\n")
    exit(2)
}

enum FileHandleStderr {
    static func write(_ text: String) {
        var copy = text
        // Written with write(2) on descriptor 2: the C `stderr` global is not concurrency-safe in Swift 6.
        copy.withUTF8 { bytes in _ = systemWrite(2, bytes.baseAddress, bytes.count) }
    }
}

#if canImport(Glibc)
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
private let systemWrite = Darwin.write
#endif

var arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    print(usage)
    exit(0)
}
arguments.removeFirst()
var json = false
var seconds = 1.0
var calls = 1_000_000
var only: String? = nil
var itemCounts: [Int] = []
var operations = 200
var lookups = 20_000
var skipKDF = false
var memoryPhases = false
var formatVersion = 2
var megabytes = 64
var trials = 7
var differing = 1_000
/// Takes the value after `option` from `arguments`: a whole number above zero, or the run ends with a message.
@MainActor func positiveWholeNumber(after option: String) -> Int {
    guard let value = arguments.first.flatMap(Int.init), value > 0 else { fail("\(option) needs a positive whole number") }
    arguments.removeFirst()
    return value
}

while !arguments.isEmpty {
    let option = arguments.removeFirst()
    switch option {
    case "--json": json = true
    case "--seconds":
        guard let value = arguments.first.flatMap(Double.init), value > 0 else { fail("--seconds needs a positive number") }
        seconds = value
        arguments.removeFirst()
    case "--only":
        guard let value = arguments.first else { fail("--only needs a name") }
        only = value
        arguments.removeFirst()
    case "--calls": calls = positiveWholeNumber(after: option)
    case "--items":
        while let value = arguments.first.flatMap(Int.init) {
            guard value > 0 else { fail("--items needs positive counts") }
            itemCounts.append(value)
            arguments.removeFirst()
        }
        if itemCounts.isEmpty { fail("--items needs at least one count") }
    case "--skip-kdf": skipKDF = true
    case "--memory-phases": memoryPhases = true
    case "--format":
        formatVersion = positiveWholeNumber(after: option)
        guard (1...3).contains(formatVersion) else { fail("--format needs 1, 2 or 3") }
    case "--operations": operations = positiveWholeNumber(after: option)
    case "--lookups": lookups = positiveWholeNumber(after: option)
    case "--megabytes": megabytes = positiveWholeNumber(after: option)
    case "--trials": trials = positiveWholeNumber(after: option)
    case "--differing": differing = positiveWholeNumber(after: option)
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        fail("unknown option '\(option)'\n\(usage)")
    }
}

do {
    switch command {
    case "crypto": try runCryptoBenchmark(seconds: seconds, only: only, json: json)
    case "ct": try runLeakageCheck(callsPerClass: calls, only: only, json: json)
    case "reed-solomon": try runReedSolomonBenchmark(seconds: seconds, megabytes: megabytes, json: json)
    case "store":
        var benchmark = StoreBenchmark(
            sizes: itemCounts.isEmpty ? [1_000, 10_000, 100_000, 1_000_000] : itemCounts, durableOperations: operations,
            lookups: lookups)
        benchmark.printingMemoryPhases = memoryPhases
        benchmark.formatVersion = formatVersion
        let runs = try benchmark.run()
        printStoreRuns(
            runs, passwordOpen: skipKDF ? .nan : try StoreBenchmark.measurePasswordOpen(), formatVersion: formatVersion, json: json)
    case "open-v2":
        try runOpenV2Benchmark(sizes: itemCounts.isEmpty ? [1_000, 100_000, 1_000_000] : itemCounts)
    case "kdf-open": try runKDFOpenBenchmark(trials: trials, json: json)
    case "merge":
        try runMergeBenchmark(sizes: itemCounts.isEmpty ? [100_000] : itemCounts, differing: differing, formatVersion: formatVersion)
    case "write-pattern":
        let rows = try WritePatternBenchmark(operations: operations).run()
        printWritePatterns(rows, operations: operations)
    case "help", "-h", "--help": print(usage)
    default: fail("unknown command '\(command)'\n\(usage)")
    }
} catch {
    fail("\(error)")
}
