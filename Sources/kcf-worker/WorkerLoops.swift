import KeychainFile

extension WorkerCommand {
    /// `add PATH PREFIX N`: adds PREFIX-0 … PREFIX-(N-1), printing `ok ACCOUNT` after each durable add.
    static func addItems(path: String, credential: Credential, prefix: String, count: Int) throws {
        let keychain = try Keychain.open(at: path, credential: credential)
        for index in 0..<count {
            let account = WorkerItems.account(prefix: prefix, index: index)
            try keychain.add(GenericPassword(service: WorkerItems.service, account: account, value: WorkerItems.secret(account: account)))
            acknowledge("ok \(account)")
        }
    }

    /// `compact-loop PATH N`: compacts N times, printing `compacted epoch E items C` after each.
    static func compactLoop(path: String, credential: Credential, count: Int) throws {
        let keychain = try Keychain.open(at: path, credential: credential)
        for _ in 0..<count {
            let result = try keychain.compact()
            acknowledge("compacted epoch \(result.after.epoch) items \(result.after.itemCount)")
        }
    }

    /// `read-loop PATH N [E]`: N rounds of reading statistics and one worker item chosen at random, then more
    /// rounds until it has seen E epochs (for at most 30 s more), so that a reader that is quick overlaps the
    /// compactions a test runs beside it. Nobody may delete worker items meanwhile: an item listed and then
    /// not found, or a secret that is not its item's, fails the check. Prints `epoch E items C` whenever the
    /// epoch changes, and `reads N` at the end.
    static func readLoop(path: String, credential: Credential, count: Int, minimumEpochs: Int = 0) throws {
        let keychain = try Keychain.open(at: path, credential: credential)
        var lastEpoch: UInt64 = 0
        var lastCount = 0
        var epochsSeen = 0
        var round = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while round < count || (epochsSeen < minimumEpochs && ContinuousClock.now < deadline) {
            round += 1
            let statistics = try keychain.statistics()
            guard statistics.itemCount >= lastCount else {
                throw CheckFailure(description: "the item count went down from \(lastCount) to \(statistics.itemCount)")
            }
            lastCount = statistics.itemCount
            if statistics.epoch != lastEpoch {
                lastEpoch = statistics.epoch
                epochsSeen += 1
                acknowledge("epoch \(statistics.epoch) items \(statistics.itemCount)")
            }
            guard let item = try WorkerItems.all(in: keychain).randomElement() else { continue }
            let found = try keychain.find(GenericPassword.self, matching: .genericPassword(service: WorkerItems.service, account: item.account))
            guard found.count == 1, found[0].account == item.account else {
                throw CheckFailure(description: "\(item.account): found \(found.count) items \(found.map(\.account))")
            }
            guard WorkerItems.isSecret(found[0].value, of: item.account) else {
                throw CheckFailure(description: "\(item.account): a secret that is not this item's")
            }
        }
        acknowledge("reads \(count)")
    }

    /// `update-loop PATH PREFIX N`: N times, sets a new secret on a random existing `PREFIX-…` item, printing
    /// `updated ACCOUNT V` after each durable update. Fails if there is no such item.
    static func updateLoop(path: String, credential: Credential, prefix: String, count: Int) throws {
        let keychain = try Keychain.open(at: path, credential: credential)
        for version in 0..<count {
            let mine = try WorkerItems.all(in: keychain).filter { $0.account.hasPrefix(prefix + "-") }
            guard let item = mine.randomElement() else {
                throw KeychainError.itemNotFound
            }
            let changed = try keychain.update(
                .genericPassword(service: WorkerItems.service, account: item.account), setting: [:],
                secret: WorkerItems.secret(account: item.account, version: version))
            guard changed == 1 else { throw CheckFailure(description: "updating \(item.account) changed \(changed) items") }
            acknowledge("updated \(item.account) \(version)")
        }
    }
}
