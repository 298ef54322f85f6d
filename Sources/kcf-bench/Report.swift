/// Prints figures as an aligned table, or as JSON with `--json`.
struct Report {
    let title: String
    let machine: String
    var figures: [Figure] = []

    mutating func add(_ name: String, _ value: Double, _ unit: String) {
        figures.append(Figure(name: name, value: value, unit: unit))
    }

    func print(json: Bool) {
        if json {
            var lines: [String] = []
            for figure in figures {
                lines.append("    {\"name\": \(quoted(figure.name)), \"value\": \(formatJSON(figure.value)), \"unit\": \(quoted(figure.unit))}")
            }
            Swift.print("{\n  \"benchmark\": \(quoted(title)),\n  \"machine\": \(quoted(machine)),\n  \"figures\": [\n\(lines.joined(separator: ",\n"))\n  ]\n}")
            return
        }
        Swift.print("\(title) — \(machine)")
        let width = figures.map(\.name.count).max() ?? 0
        for figure in figures {
            let padding = String(repeating: " ", count: width - figure.name.count)
            Swift.print("  \(figure.name)\(padding)  \(formatValue(figure.value)) \(figure.unit)")
        }
    }
}

func quoted(_ text: String) -> String {
    var escaped = ""
    for character in text.unicodeScalars {
        switch character {
        case "\"": escaped += "\\\""
        case "\\": escaped += "\\\\"
        case "\n": escaped += "\\n"
        default: escaped.unicodeScalars.append(character)
        }
    }
    return "\"\(escaped)\""
}

func formatJSON(_ value: Double) -> String {
    value.isFinite ? String(format3(value)) : "null"
}

/// A value with three significant decimals for small numbers and thousands separators for large ones.
func formatValue(_ value: Double) -> String {
    guard value.isFinite else { return "n/a" }
    if value >= 1000 {
        let rounded = Int(value.rounded())
        let digits = String(rounded)
        var grouped = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped += "," }
            grouped.append(character)
        }
        return grouped
    }
    return format3(value)
}

func format3(_ value: Double) -> String {
    let scaled = (value * 1000).rounded() / 1000
    var text = String(scaled)
    if text.hasSuffix(".0") { text.removeLast(2) }
    return text
}
