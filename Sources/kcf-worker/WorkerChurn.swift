import Foundation
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

    /// `scan-loop PATH STOPFILE`: lists every worker item until the file STOPFILE exists, while others add and
    /// delete: no account twice, and the secret of one listed item (if it is still there) is its own. Prints
    /// `epoch E items C` whenever the epoch changes, and `scans N` at the end.
    static func scanLoop(path: String, credential: Credential, stopFile: String) throws {
        let keychain = try Keychain.open(at: path, credential: credential)
        var lastEpoch: UInt64 = 0
        var scans = 0
        repeat {
            scans += 1
            let statistics = try keychain.statistics()
            if statistics.epoch != lastEpoch {
                lastEpoch = statistics.epoch
                acknowledge("epoch \(statistics.epoch) items \(statistics.itemCount)")
            }
            let accounts = try WorkerItems.all(in: keychain).map(\.account)
            guard Set(accounts).count == accounts.count else {
                throw CheckFailure(description: "a listing holds an account twice")
            }
            guard let account = accounts.randomElement() else { continue }
            let found: [GenericPassword]
            do throws(KeychainError) {
                found = try keychain.find(GenericPassword.self, matching: .genericPassword(service: WorkerItems.service, account: account))
            } catch {
                guard case .itemNotFound = error else { throw error }
                continue  // deleted since the listing
            }
            guard found.count == 1, WorkerItems.isSecret(found[0].value, of: account) else {
                throw CheckFailure(description: "\(account): \(found.count) items, or a secret that is not this item's")
            }
        } while !FileManager.default.fileExists(atPath: stopFile)
        acknowledge("scans \(scans)")
    }
}
