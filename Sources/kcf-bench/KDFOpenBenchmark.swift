import KeychainFile

/// `kcf-bench kdf-open`: what opening costs when the key derivation is the real one — an empty format version 2
/// keychain whose only key slot is a password's, derived with Argon2id at RFC 9106 §4's second recommended option
/// (64 MiB, 3 passes, 4 lanes) or with PBKDF2-HMAC-SHA256 at 600,000 rounds. The two are opened in turn, `trials`
/// times each, so that both see the same load; the best and the median of each are printed. Issue 31 makes
/// Argon2id the default only if its open takes at most 1 s.
func runKDFOpenBenchmark(trials: Int, json: Bool) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let password = Credential.password("benchmark password")
    let kinds: [(name: String, keyDerivation: PasswordKeyDerivation)] = [
        ("Argon2id m=64 MiB t=3 p=4", .recommendedArgon2id),
        ("PBKDF2-HMAC-SHA256 600,000 rounds", .pbkdf2(.standard)),
    ]
    var paths: [String] = []
    for (index, kind) in kinds.enumerated() {
        let path = directory.path + "/kdf-\(index).kcf"
        _ = try Keychain.create(
            at: path, credential: password, options: Keychain.CreationOptions(passwordKeyDerivation: kind.keyDerivation))
        paths.append(path)
    }
    var timings = [[Double]](repeating: [], count: kinds.count)
    for _ in 0..<trials {
        for (index, path) in paths.enumerated() {
            let start = monotonicNanoseconds()
            let keychain = try Keychain.open(at: path, credential: password)
            timings[index].append(Double(monotonicNanoseconds() - start) / 1e6)
            guard keychain.fileFormatVersion == 2 else { throw BenchmarkFailure("kdf-open made a file of version \(keychain.fileFormatVersion)") }
        }
    }
    var report = Report(title: "kcf-bench kdf-open (empty version 2 keychain, one password slot, \(trials) opens each, alternated)",
                        machine: machineDescription())
    for (index, kind) in kinds.enumerated() {
        let sorted = timings[index].sorted()
        report.add("\(kind.name): open (best)", sorted[0], "ms")
        report.add("\(kind.name): open (median)", sorted[sorted.count / 2], "ms")
    }
    report.print(json: json)
}
