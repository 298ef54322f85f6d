import Foundation

/// The columns of an export's CSV header that an importer reads, found by name (in any case and order), and
/// the columns it does not know, whose values are reported as not imported.
struct CSVColumns {
    /// The position of each known column present, by its name in lowercase.
    private let positions: [String: Int]
    /// The columns the importer does not know: their names as written and positions.
    let unknown: [(name: String, position: Int)]

    /// Finds the columns of `header`.
    ///
    /// - Parameters:
    ///   - header: The column names of the file.
    ///   - required: The columns the format always has; any missing is an error.
    ///   - optional: Columns it reads when present (older versions of the exporter lack some).
    ///   - format: The format's name for messages, such as "Bitwarden CSV export".
    /// - Throws: ``ImportParseError`` naming the columns missing, or a column named twice.
    init(header: [String], required: [String], optional: [String], format: String) throws(ImportParseError) {
        var positions: [String: Int] = [:]
        var unknown: [(String, Int)] = []
        var seen: Set<String> = []
        let known = Set((required + optional).map { $0.lowercased() })
        for (position, name) in header.enumerated() {
            let key = Self.key(name)
            guard seen.insert(key).inserted else {
                throw ImportParseError(line: 1, "the column \"\(name)\" is named twice")
            }
            if known.contains(key) { positions[key] = position } else { unknown.append((name, position)) }
        }
        let missing = required.filter { positions[$0.lowercased()] == nil }
        guard missing.isEmpty else {
            throw ImportParseError(line: 1, "not a \(format): the header has no column "
                + missing.map { "\"\($0)\"" }.joined(separator: ", ") + " (its columns: "
                + header.map { "\"\($0)\"" }.joined(separator: ", ") + ")")
        }
        self.positions = positions
        self.unknown = unknown
    }

    /// The value of column `name` in `record`; empty when the file has no such column.
    func value(_ name: String, in record: CSVTable.Record) -> String {
        positions[name.lowercased()].map { record.fields[$0] } ?? ""
    }

    /// Reports the values of unknown columns in `record` as not imported.
    func reportUnknown(in record: CSVTable.Record, origin: String, report: inout ImportReport) {
        for column in unknown where !record.fields[column.position].isEmpty {
            report.notKept("column \"\(column.name)\" (not a column kcf reads)", in: origin)
        }
    }

    /// Whether `header` has every one of `names` (in any case): how a format is told from its header.
    static func header(_ header: [String], has names: [String]) -> Bool {
        let present = Set(header.map(key))
        return names.allSatisfy { present.contains($0.lowercased()) }
    }

    /// A column name as compared: without surrounding spaces, in lowercase.
    private static func key(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespaces).lowercased()
    }
}
