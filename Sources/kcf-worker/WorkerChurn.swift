import KeychainFile

extension WorkerCommand {
    /// `churn PATH PREFIX N`: adds PREFIX-0 … PREFIX-(N-1), printing `added ACCOUNT` after each durable add,
    /// and after every third add deletes the one before it, printing `deleted ACCOUNT`.
    static func churn(path: String, credential: Credential, prefix: String, count: Int) throws {
        let keychain = try Keychain.open(at: path, credential: credential)
        for index in 0..<count {
            let account = WorkerItems.account(prefix: prefix, index: index)
            try keychain.add(GenericPassword(service: WorkerItems.service, account: account, value: WorkerItems.secret(account: account)))
            acknowledge("added \(account)")
            if index % 3 == 2 {
                let previous = WorkerItems.account(prefix: prefix, index: index - 1)
                let removed = try keychain.delete(.genericPassword(service: WorkerItems.service, account: previous))
                guard removed == 1 else { throw CheckFailure(description: "deleting \(previous) removed \(removed) items") }
                acknowledge("deleted \(previous)")
            }
        }
    }

    /// `rotate-loop PATH N`: N times, replaces the master key, keeping the worker's password and adding
    /// `rotation-I` as a second one, printing `rotated I` after each. Other processes that opened the file with
    /// the worker's password go on.
    static func rotateLoop(path: String, credential: Credential, count: Int) throws {
        let keychain = try Keychain.open(at: path, credential: credential)
        for index in 0..<count {
            try keychain.rotateMasterKey(
                credentials: [credential, .password(rotationPassword(index))], iterations: .insecureForTesting(1_000))
            acknowledge("rotated \(index)")
        }
    }

    /// The second password `rotate-loop` leaves after rotation `index`.
    static func rotationPassword(_ index: Int) -> String { "rotation-\(index)" }

    /// `scan-loop PATH N`: N listings of every worker item with its secret, while others add and delete: no
    /// account twice, every secret its item's. Prints `epoch E items C` whenever the epoch changes, and
    /// `scans N` at the end.
    static func scanLoop(path: String, credential: Credential, count: Int) throws {
        let keychain = try Keychain.open(at: path, credential: credential)
        var lastEpoch: UInt64 = 0
        for _ in 0..<count {
            let statistics = try keychain.statistics()
            if statistics.epoch != lastEpoch {
                lastEpoch = statistics.epoch
                acknowledge("epoch \(statistics.epoch) items \(statistics.itemCount)")
            }
            let items: [GenericPassword]
            do throws(KeychainError) {
                items = try keychain.find(GenericPassword.self, matching: .genericPassword(service: WorkerItems.service))
            } catch {
                guard case .itemNotFound = error else { throw error }
                continue
            }
            guard Set(items.map(\.account)).count == items.count else {
                throw CheckFailure(description: "a listing holds an account twice")
            }
            for item in items where !WorkerItems.isSecret(item.value, of: item.account) {
                throw CheckFailure(description: "\(item.account): a secret that is not this item's")
            }
        }
        acknowledge("scans \(count)")
    }
}
