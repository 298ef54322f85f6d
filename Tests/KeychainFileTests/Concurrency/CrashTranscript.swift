import Foundation

/// What a chaos item holds: its secret, label and comment. An update changes all three at once, so an item
/// holding some new and some old values is a half-applied update.
struct CrashItem: Equatable, CustomStringConvertible {
    var secret: [UInt8]
    var label: String
    var comment: String

    var description: String {
        let text = String(decoding: secret.prefix(24), as: UTF8.self)
        return "(\(secret.count) bytes \"\(text)…\", label \(label), comment \(comment))"
    }
}

/// A change to one chaos item.
enum CrashItemChange: Equatable {
    case add(account: String, item: CrashItem)
    case update(account: String, item: CrashItem)
    case delete(account: String)

    var account: String {
        switch self {
        case .add(let account, _), .update(let account, _), .delete(let account): return account
        }
    }
}

/// One step of `kcf-worker chaos`, as parsed from its `begin` line.
enum CrashStep: Equatable, CustomStringConvertible {
    /// One add, update or delete (batch false), or several committed as one batch.
    case items([CrashItemChange], batch: Bool)
    case compact
    /// Makes `password` (1 or 2) the only password, by replacing the slot or by rotating the master key.
    case credential(password: Int, rotate: Bool)

    var kind: String {
        switch self {
        case .items(let changes, let batch):
            guard !batch, let change = changes.first else { return "batch" }
            switch change {
            case .add: return "add"
            case .update: return "update"
            case .delete: return "delete"
            }
        case .compact: return "compact"
        case .credential: return "credential"
        }
    }

    var description: String {
        switch self {
        case .items(let changes, _): return "\(kind) \(changes.map(\.account))"
        case .compact: return "compact"
        case .credential(let password, let rotate): return "credential → password \(password) (\(rotate ? "rotate" : "change"))"
        }
    }
}

/// The output of one `kcf-worker chaos` run, parsed independently of the worker's code from the protocol in
/// Sources/kcf-worker/ChaosOperation.swift.
struct CrashTranscript {
    /// The `open` line: which password opened the file, whether commits may compact on their own, and the
    /// file's epoch and end of its last whole record. `nil` if the worker died before printing it.
    struct Opening: Equatable {
        var password: Int
        var automaticCompaction: Bool
        var epoch: UInt64
        var end: Int
    }

    /// An acknowledged step and the file's epoch and end after it.
    struct Acknowledged {
        var sequence: Int
        var step: CrashStep
        var epoch: UInt64
        var end: Int
    }

    var opening: Opening?
    var acknowledged: [Acknowledged] = []
    /// The step that began and was not acknowledged (the worker was killed during it), if any.
    var pending: (sequence: Int, step: CrashStep)?
    /// Whether the worker printed `done`.
    var finished = false

    struct ParseError: Error, CustomStringConvertible {
        let line: String
        let problem: String
        var description: String { "\(problem): \"\(line)\"" }
    }

    /// Parses the worker's complete lines. Every line must follow the protocol; an `ack` must acknowledge the
    /// step that began just before it, and only the last step may be left unacknowledged.
    init(lines: [String]) throws {
        for line in lines {
            let words = line.split(separator: " ").map(String.init)
            func fail(_ problem: String) -> ParseError { ParseError(line: line, problem: problem) }
            guard let first = words.first else { throw fail("an empty line") }
            switch first {
            case "open":
                guard opening == nil, words.count == 5, let password = Int(words[1]), [1, 2].contains(password),
                      ["auto", "manual"].contains(words[2]), let epoch = UInt64(words[3]), let end = Int(words[4])
                else { throw fail("a malformed or second open line") }
                opening = Opening(password: password, automaticCompaction: words[2] == "auto", epoch: epoch, end: end)
            case "begin":
                guard opening != nil, pending == nil, !finished else { throw fail("a begin before open, after done, or before the last step's ack") }
                guard words.count >= 3, let sequence = Int(words[1]) else { throw fail("a malformed begin") }
                pending = (sequence, try Self.step(Array(words.dropFirst(2)), fail))
            case "ack":
                guard words.count == 4, let sequence = Int(words[1]), let epoch = UInt64(words[2]), let end = Int(words[3])
                else { throw fail("a malformed ack") }
                guard let begun = pending, begun.sequence == sequence else { throw fail("an ack of a step that is not the one in flight") }
                acknowledged.append(Acknowledged(sequence: sequence, step: begun.step, epoch: epoch, end: end))
                pending = nil
            case "done":
                guard pending == nil, words.count == 2, Int(words[1]) == acknowledged.count else { throw fail("a done that does not match the acks") }
                finished = true
            default:
                throw fail("an unknown line")
            }
        }
    }

    private static func step(_ words: [String], _ fail: (String) -> ParseError) throws -> CrashStep {
        switch words[0] {
        case "compact" where words.count == 1:
            return .compact
        case "credential" where words.count == 3:
            guard let password = Int(words[1]), [1, 2].contains(password), ["change", "rotate"].contains(words[2]) else {
                throw fail("a malformed credential step")
            }
            return .credential(password: password, rotate: words[2] == "rotate")
        case "op" where words.count == 2, "batch" where words.count >= 2:
            let changes = try words.dropFirst().map { try change($0, fail) }
            guard Set(changes.map(\.account)).count == changes.count else { throw fail("a batch touching an account twice") }
            return .items(changes, batch: words[0] == "batch")
        default:
            throw fail("a malformed step")
        }
    }

    private static func change(_ word: String, _ fail: (String) -> ParseError) throws -> CrashItemChange {
        let fields = word.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch (fields.first, fields.count) {
        case ("delete", 2):
            return .delete(account: fields[1])
        case ("add", 5), ("update", 5):
            let secretFields = fields[2].split(separator: ":").map(String.init)
            guard secretFields.count == 2, let length = Int(secretFields[1]), length > 0 else { throw fail("a malformed secret \(fields[2])") }
            let item = CrashItem(secret: expandSecret(secretFields[0], length: length), label: fields[3], comment: fields[4])
            return fields[0] == "add" ? .add(account: fields[1], item: item) : .update(account: fields[1], item: item)
        default:
            throw fail("a malformed item operation \(word)")
        }
    }

    /// The protocol's secret: `TEXT|` repeated and cut to `length` bytes.
    static func expandSecret(_ text: String, length: Int) -> [UInt8] {
        let unit = Array((text + "|").utf8)
        return (0..<length).map { unit[$0 % unit.count] }
    }
}
