import KeychainFile

/// One step of `kcf-worker chaos`, and the words it is printed as (the protocol the crash-trial tests parse).
///
/// Lines, one `write(2)` each:
///
///     open P MODE EPOCH END        opened with password P (1 or 2); MODE auto|manual (auto-compaction);
///                                  the file's epoch and the end of its last whole record
///     begin SEQ op ITEMOP          about to run one add, update or delete (the single-operation calls)
///     begin SEQ batch ITEMOP…      about to run several as one batch: all or none
///     begin SEQ compact            about to compact
///     begin SEQ credential P HOW   about to make password P the only one: HOW is change (a slot replaced)
///                                  or rotate (a new master key)
///     ack SEQ EPOCH END            step SEQ returned: it is durable; the file's epoch and end afterwards
///     done N                       all N steps acknowledged
///
/// ITEMOP is `add/ACCOUNT/SECRET/LABEL/COMMENT`, `update/ACCOUNT/SECRET/LABEL/COMMENT` (secret, label and
/// comment all change) or `delete/ACCOUNT`. Items are generic passwords of service "chaos". SECRET is
/// `TEXT:LENGTH`: the secret is the bytes of `TEXT|` repeated and cut to LENGTH bytes.
enum ChaosStep {
    case items([ChaosItemOperation], batch: Bool)
    case compact
    case credential(password: Int, rotate: Bool)

    var words: String {
        switch self {
        case .items(let operations, let batch):
            return (batch ? "batch " : "op ") + operations.map(\.word).joined(separator: " ")
        case .compact:
            return "compact"
        case .credential(let password, let rotate):
            return "credential \(password) \(rotate ? "rotate" : "change")"
        }
    }
}

/// An add, update or delete of one chaos item.
enum ChaosItemOperation {
    case add(account: String, content: ChaosContent)
    case update(account: String, content: ChaosContent)
    case delete(account: String)

    var account: String {
        switch self {
        case .add(let account, _), .update(let account, _), .delete(let account): return account
        }
    }

    var word: String {
        switch self {
        case .add(let account, let content): return "add/\(account)/\(content.word)"
        case .update(let account, let content): return "update/\(account)/\(content.word)"
        case .delete(let account): return "delete/\(account)"
        }
    }
}

/// What an add or update writes: a secret (described by a text and a length), a label and a comment.
struct ChaosContent {
    let secretText: String
    let secretLength: Int
    let label: String
    let comment: String

    var word: String { "\(secretText):\(secretLength)/\(label)/\(comment)" }

    /// `secretText + "|"` repeated and cut to `secretLength` bytes.
    var secret: [UInt8] {
        let unit = Array((secretText + "|").utf8)
        return (0..<secretLength).map { unit[$0 % unit.count] }
    }
}

/// The items `chaos` writes.
enum ChaosItems {
    static let service = "chaos"

    static func query(_ account: String) -> Query { .genericPassword(service: service, account: account) }

    /// Every chaos item's account, read from the keychain (attributes only).
    static func accounts(in keychain: Keychain) throws(KeychainError) -> [String] {
        do throws(KeychainError) {
            return try keychain.find(GenericPassword.self, matching: .genericPassword(service: service), loadingValues: false)
                .map(\.account)
        } catch {
            if case .itemNotFound = error { return [] }
            throw error
        }
    }
}
