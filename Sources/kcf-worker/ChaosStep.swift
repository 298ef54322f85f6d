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
