import KeychainFile

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
