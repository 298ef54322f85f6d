import Foundation

/// The lines of Unicode 15.0's NormalizationTest.txt, read from the copy under `Fixtures/unicode/`
/// (made by Scripts/generate-nfc-tables.py).
///
/// For example:
/// ```swift
/// let data = try NormalizationTestData.shared()
/// data.lines[0].source   // [U+1E0A], with nfc [U+1E0A] and nfd [U+0044, U+0307]
/// ```
struct NormalizationTestData: Sendable {
    /// One test line: the five columns (UAX #15's c1…c5) and the part it belongs to.
    struct Line: Sendable {
        var part: Int
        var lineNumber: Int
        var source: [Unicode.Scalar]   // c1
        var nfc: [Unicode.Scalar]      // c2
        var nfd: [Unicode.Scalar]      // c3
        var nfkc: [Unicode.Scalar]     // c4
        var nfkd: [Unicode.Scalar]     // c5
    }

    /// Thrown when the data file has a line that is not five columns of hexadecimal scalars.
    struct MalformedLine: Error, CustomStringConvertible {
        var lineNumber: Int
        var text: String
        var description: String { "NormalizationTest.txt line \(lineNumber) is malformed: \(text)" }
    }

    /// The file's version line, e.g. `# NormalizationTest-15.0.0.txt`.
    var versionLine: String
    var lines: [Line]

    /// The copy of the data file in the repository.
    static let url = RepositoryFiles.url("Fixtures/unicode/NormalizationTest.txt")

    /// The data file, read once for all the suites that use it.
    static func shared() throws -> NormalizationTestData {
        try loaded.get()
    }

    private static let loaded = Result { try load() }

    /// Reads and parses the data file.
    static func load() throws -> NormalizationTestData {
        let text = try String(contentsOf: url, encoding: .utf8)
        var versionLine = ""
        var part = -1
        var lines: [Line] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if rawLine.hasPrefix("# NormalizationTest-") { versionLine = String(rawLine) }
            if rawLine.hasPrefix("@Part") {
                part = Int(rawLine.dropFirst(5).prefix(while: \.isNumber)) ?? -1
                continue
            }
            let content = rawLine.prefix(while: { $0 != "#" })
            guard !content.allSatisfy(\.isWhitespace) else { continue }
            let columns = content.split(separator: ";", omittingEmptySubsequences: false).prefix(5).map { column in
                column.split(separator: " ").map { UInt32($0, radix: 16).flatMap(Unicode.Scalar.init) }
            }
            guard part >= 0, columns.count == 5, columns.allSatisfy({ !$0.isEmpty && !$0.contains(nil) }) else {
                throw MalformedLine(lineNumber: index + 1, text: String(rawLine))
            }
            let scalars = columns.map { $0.compactMap { $0 } }
            lines.append(Line(part: part, lineNumber: index + 1, source: scalars[0], nfc: scalars[1], nfd: scalars[2],
                              nfkc: scalars[3], nfkd: scalars[4]))
        }
        return NormalizationTestData(versionLine: versionLine, lines: lines)
    }

    /// Scalars written as hexadecimal code points, e.g. `0F40 0F71`.
    static func hex(_ scalars: some Sequence<Unicode.Scalar>) -> String {
        scalars.map { String(format: "%04X", $0.value) }.joined(separator: " ")
    }
}
