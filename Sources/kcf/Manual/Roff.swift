/// Text for a roff (man(7)) page: escapes, and the font changes kcf's manual uses.
enum Roff {
    /// `text` as roff input: a backslash as `\e`, every `-` as `\-` (a minus, so that options copied from the
    /// page work), characters outside ASCII as `\[uXXXX]` (so that the page renders without preconv), and a
    /// leading `.` or `'` protected with `\&` so that it is not read as a request.
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\e"
            case "-": result += "\\-"
            case " "..."~": result.unicodeScalars.append(scalar)
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            }
        }
        if result.hasPrefix(".") || result.hasPrefix("'") { result = "\\&" + result }
        return result
    }

    /// `text` in bold.
    static func bold(_ text: String) -> String { "\\fB" + escaped(text) + "\\fR" }

    /// `text` in italics.
    static func italic(_ text: String) -> String { "\\fI" + escaped(text) + "\\fR" }

    /// An option as the manual shows it: its spellings in bold, its value's name in italics.
    static func option(_ option: OptionSpec) -> String {
        let names = option.spellings.map(bold).joined(separator: ", ")
        switch option.arity {
        case .flag: return names
        case .value(let name): return names + " " + italic(name)
        case .optionalValue(let name): return names + " [" + italic(name) + "]"
        }
    }

    /// Text lines as roff: runs of prose filled into paragraphs (`.PP`), runs of indented lines kept as they
    /// are (`.nf`), and items that start with `- ` as a bulleted list (`.IP`), their continuation lines
    /// indented. Every branch takes at least one line.
    static func paragraphs(_ lines: [String]) -> [String] {
        var output: [String] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            if line.trimmingSpaces.isEmpty {
                index += 1
            } else if line.hasPrefix("- ") {
                var item = [String(line.dropFirst(2))]
                index += 1
                while index < lines.count, lines[index].hasPrefix(" ") {
                    item.append(lines[index].trimmingSpaces)
                    index += 1
                }
                output += [".IP \\(bu 2", escaped(item.joined(separator: " "))]
            } else if line.hasPrefix(" ") {
                output += [".PP", ".nf", ".RS 4"]
                while index < lines.count, lines[index].hasPrefix(" ") {
                    output.append(escaped(lines[index].trimmingSpaces))
                    index += 1
                }
                output += [".RE", ".fi"]
            } else {
                var prose: [String] = []
                while index < lines.count, !lines[index].hasPrefix(" "), !lines[index].hasPrefix("- "), !lines[index].trimmingSpaces.isEmpty {
                    prose.append(lines[index].trimmingSpaces)
                    index += 1
                }
                output += [".PP", escaped(prose.joined(separator: " "))]
            }
        }
        return output
    }
}

extension String {
    /// The text without spaces at either end.
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
