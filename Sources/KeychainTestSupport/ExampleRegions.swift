/// The example regions of Swift test sources: the code a documentation block (``MarkdownCodeBlock``) must be,
/// byte for byte, so that the documentation shows exactly what the tests compile and run.
///
/// A region is the lines between a line `// example: NAME` and a line `// example end` (each alone on its line,
/// indentation aside). The region's common indentation is removed, so that code inside a test function reads
/// as it does at the top level of a README block. Several regions of one name — the `import` lines at the top
/// of a file and the statements inside a test — form one example, one after the other (a region that goes on
/// from the imports starts with the empty line that separates them).
public enum ExampleRegions {
    /// Thrown for markers that do not pair up.
    public struct Malformed: Error, CustomStringConvertible {
        public let file: String
        public let line: Int
        public let reason: String
        public var description: String { "\(file):\(line): \(reason)" }
    }

    /// The examples of one source file, by name.
    ///
    /// - Parameters:
    ///   - source: The file's text.
    ///   - file: Its name, for errors.
    /// - Throws: ``Malformed`` for a region opened inside another, an end without a start, or a region never
    ///   closed.
    public static func examples(in source: String, file: String) throws -> [String: String] {
        var parts: [String: [String]] = [:]
        var open: (name: String, line: Int, lines: [String])?
        for (offset, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let text = String(line)
            let trimmed = text.trimmingSpaces
            if trimmed.hasPrefix("// example:") {
                if let open { throw Malformed(file: file, line: offset + 1, reason: "region opened inside \(open.name)") }
                let name = String(trimmed.dropFirst("// example:".count)).trimmingSpaces
                guard !name.isEmpty else { throw Malformed(file: file, line: offset + 1, reason: "a region needs a name") }
                open = (name, offset + 1, [])
            } else if trimmed == "// example end" {
                guard let region = open else { throw Malformed(file: file, line: offset + 1, reason: "end without a region") }
                parts[region.name, default: []].append(dedented(region.lines))
                open = nil
            } else if open != nil {
                open!.lines.append(text)
            }
        }
        if let open { throw Malformed(file: file, line: open.line, reason: "region \(open.name) is never closed") }
        return parts.mapValues { $0.joined() }
    }

    /// `lines` without their common leading spaces, each ending in a line feed; empty lines stay empty.
    static func dedented(_ lines: [String]) -> String {
        let indents = lines.filter { !$0.trimmingSpaces.isEmpty }.map { $0.prefix(while: { $0 == " " }).count }
        let indent = indents.min() ?? 0
        return lines.map { ($0.trimmingSpaces.isEmpty ? "" : String($0.dropFirst(indent))) + "\n" }.joined()
    }
}
