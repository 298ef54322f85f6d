import Foundation
import KeychainFile

/// Parses the command line and runs one command.
enum WorkerCommand {
    static let passwordVariable = "KCF_WORKER_PASSWORD"

    static func run(arguments: [String]) -> Int32 {
        guard let name = arguments.first else { return usage("no command") }
        let rest = Array(arguments.dropFirst())
        guard let password = ProcessInfo.processInfo.environment[passwordVariable], !password.isEmpty else {
            return usage("set \(passwordVariable) to the keychain's password")
        }
        let credential = Credential.password(password)
        do {
            switch (name, rest.count) {
            case ("add", 3):
                guard let count = Int(rest[2]), count >= 0 else { return usage("N must be a count") }
                try addItems(path: rest[0], credential: credential, prefix: rest[1], count: count)
            case ("compact-loop", 2):
                guard let count = Int(rest[1]), count >= 0 else { return usage("N must be a count") }
                try compactLoop(path: rest[0], credential: credential, count: count)
            case ("read-loop", 2), ("read-loop", 3):
                guard let count = Int(rest[1]), count >= 0 else { return usage("N must be a count") }
                guard let epochs = rest.count == 3 ? Int(rest[2]) : 0, epochs >= 0 else { return usage("E must be a count") }
                try readLoop(path: rest[0], credential: credential, count: count, minimumEpochs: epochs)
            case ("update-loop", 3):
                guard let count = Int(rest[2]), count >= 0 else { return usage("N must be a count") }
                try updateLoop(path: rest[0], credential: credential, prefix: rest[1], count: count)
            case ("churn", 3):
                guard let count = Int(rest[2]), count >= 0 else { return usage("N must be a count") }
                try churn(path: rest[0], credential: credential, prefix: rest[1], count: count)
            case ("rotate-loop", 2):
                guard let count = Int(rest[1]), count >= 0 else { return usage("N must be a count") }
                try rotateLoop(path: rest[0], credential: credential, count: count)
            case ("scan-loop", 2):
                try scanLoop(path: rest[0], credential: credential, stopFile: rest[1])
            case ("chaos", 3):
                guard let seed = UInt64(rest[1]), let count = Int(rest[2]), count >= 0 else {
                    return usage("SEED and N must be counts")
                }
                guard let second = ProcessInfo.processInfo.environment[secondPasswordVariable], !second.isEmpty else {
                    return usage("chaos needs \(secondPasswordVariable) too")
                }
                try chaos(path: rest[0], passwords: [password, second], seed: seed, count: count)
            default:
                return usage("unknown command or wrong number of arguments: \(arguments.joined(separator: " "))")
            }
        } catch let error as KeychainError {
            report("keychain error: \(error)")
            return WorkerExit.keychainError
        } catch {
            report("check failed: \(error)")
            return WorkerExit.checkFailed
        }
        return WorkerExit.success
    }

    private static func usage(_ problem: String) -> Int32 {
        report(problem)
        report("usage: kcf-worker add PATH PREFIX N | compact-loop PATH N | read-loop PATH N [E] | update-loop PATH PREFIX N | churn PATH PREFIX N | rotate-loop PATH N | scan-loop PATH STOPFILE | chaos PATH SEED N")
        return WorkerExit.usage
    }
}
