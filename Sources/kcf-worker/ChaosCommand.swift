import KeychainFile

extension WorkerCommand {
    /// The second password `chaos` alternates with (`KCF_WORKER_PASSWORD` is the first).
    static let secondPasswordVariable = "KCF_WORKER_PASSWORD2"

    /// `chaos PATH SEED N`: N seeded random steps — adds, updates, deletes, batches, compactions and credential
    /// changes — printing `begin` before each step and `ack` after it returned (ChaosOperation.swift has the
    /// protocol). The keychain must be opened by one of `passwords`; each credential change makes the other
    /// one the only password. The worker must be the only writer: it keeps its own list of the items.
    static func chaos(path: String, passwords: [String], seed: UInt64, count: Int) throws(KeychainError) {
        var run = try ChaosRun(path: path, passwords: passwords, seed: seed)
        for sequence in stride(from: 1, through: count, by: 1) {
            try run.step(sequence)
        }
        acknowledge("done \(count)")
    }
}
