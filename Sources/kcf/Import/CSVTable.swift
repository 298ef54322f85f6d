/// A CSV file as RFC 4180 describes it and password managers write their exports: a header line of column
/// names, then one record a line; fields separated by commas; a field that holds a comma, a quote or a line
/// break is quoted, with its quotes doubled.
///
/// Read strictly, since a field out of place would put a password where a name belongs: every record has as
/// many fields as the header, a quote inside an unquoted field or after a closing quote is an error, and so is
/// a quoted field never closed. Records end with `\n` or `\r\n`; line breaks inside quoted fields are kept as
/// they are. A UTF-8 byte order mark at the start is skipped; text that is not UTF-8 is an error. Empty lines
/// between records are skipped.
///
/// For example:
/// ```swift
/// let table = try CSVTable(parsing: Array("name,notes\r\nmail,\"a, \"\"b\"\"\"\r\n".utf8))
/// // table.header == ["name", "notes"]; table.records[0].fields == ["mail", "a, \"b\""]
/// ```
struct CSVTable {
    /// One record: its fields and the line of the file it starts on.
    struct Record {
        /// The fields, as many as the header's.
        let fields: [String]
        /// The line the record starts on (1 is the header's).
        let line: Int
    }

    /// The column names of the first line, as written.
    let header: [String]
    /// The records after the header.
    let records: [Record]

    /// Reads `bytes` as a CSV file.
    ///
    /// - Throws: ``ImportParseError`` naming the line: an empty file, text that is not UTF-8, a stray or
    ///   unclosed quote, a record with more or fewer fields than the header.
    init(parsing bytes: [UInt8]) throws(ImportParseError) {
        var reader = CSVRecordReader(bytes: bytes)
        guard let header = try reader.next() else {
            throw ImportParseError("the file is empty: a CSV export starts with a line of column names")
        }
        var records: [Record] = []
        while let record = try reader.next() {
            guard record.fields.count == header.fields.count else {
                throw ImportParseError(line: record.line,
                    "\(record.fields.count) field\(record.fields.count == 1 ? "" : "s") where the header has \(header.fields.count): a comma or a quote is missing or extra")
            }
            records.append(record)
        }
        self.header = header.fields
        self.records = records
    }
}
