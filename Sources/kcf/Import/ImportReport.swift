/// What an import could not carry over, printed on stderr: the items it skipped, each with the reason, and
/// the values it did not keep (a column or an attribute kcf has no place for), each with the items that had
/// one. Nothing an export holds is dropped without a line here.
struct ImportReport {
    /// An item left out, where it is in the input, and why.
    struct Skipped {
        let origin: String
        let reason: String
    }

    /// The items left out, in input order.
    private(set) var skipped: [Skipped] = []
    /// What was not kept (such as `column "login_totp" (one-time password seeds)`), in the order first met,
    /// with the items that had it.
    private(set) var notKept: [(what: String, origins: [String])] = []
    /// Things said once about the whole import (such as the dates of a dump not being kept).
    private(set) var notes: [String] = []

    /// Leaves an item out.
    mutating func skip(_ origin: String, _ reason: String) {
        skipped.append(Skipped(origin: origin, reason: reason))
    }

    /// Records that the item at `origin` had a value of `what` that was not kept.
    mutating func notKept(_ what: String, in origin: String) {
        if let index = notKept.firstIndex(where: { $0.what == what }) {
            notKept[index].origins.append(origin)
        } else {
            notKept.append((what, [origin]))
        }
    }

    /// Says something once about the whole import.
    mutating func note(_ text: String) {
        if !notes.contains(text) { notes.append(text) }
    }

    /// Whether every item was imported with every value.
    var isComplete: Bool { skipped.isEmpty && notKept.isEmpty }

    /// The lines for stderr, without the `kcf: import: ` prefix: one per skipped item, one per value not kept
    /// (naming the first few items that had it), then the notes.
    var lines: [String] {
        var lines = skipped.map { "skipped \($0.origin): \($0.reason)" }
        for (what, origins) in notKept {
            let shown = origins.prefix(Self.originsShown).joined(separator: ", ")
            let more = origins.count > Self.originsShown ? ", and \(origins.count - Self.originsShown) more" : ""
            lines.append("not imported: \(what), in \(origins.count) item\(origins.count == 1 ? "" : "s"): \(shown)\(more)")
        }
        return lines + notes
    }

    /// An item's place in a text file, for messages: `line 12 ("GitHub")`.
    static func origin(line: Int, name: String) -> String {
        "line \(line) (\(quoted(name)))"
    }

    /// A name in quotes for a message: quotes, backslashes and control characters escaped, cut after 60
    /// characters.
    static func quoted(_ name: String) -> String {
        var text = ""
        for (index, character) in name.enumerated() {
            if index == 60 { text += "…"; break }
            switch character {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\r\n": text += "\\r\\n"
            case "\t": text += "\\t"
            default:
                if character.unicodeScalars.allSatisfy({ $0.properties.generalCategory == .control }) {
                    text += character.unicodeScalars.map { "\\u{" + String($0.value, radix: 16) + "}" }.joined()
                } else {
                    text.append(character)
                }
            }
        }
        return "\"" + text + "\""
    }

    /// How many items a line about a value not kept names before "and N more".
    static let originsShown = 5
}
