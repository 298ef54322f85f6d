/// Reads the records of a CSV file one at a time (see ``CSVTable``).
struct CSVRecordReader {
    private let bytes: [UInt8]
    private var index: Int
    private var line = 1

    init(bytes: [UInt8]) {
        self.bytes = bytes
        index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    }

    private static let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), newline = UInt8(ascii: "\n"),
                       carriageReturn = UInt8(ascii: "\r")

    /// The next record that is not an empty line, or `nil` at the end of the file.
    mutating func next() throws(ImportParseError) -> CSVTable.Record? {
        while index < bytes.count {
            let start = line
            let fields = try readRecord()
            if fields.count == 1 && fields[0].isEmpty && !lastFieldWasQuoted { continue }
            return CSVTable.Record(fields: fields, line: start)
        }
        return nil
    }

    private var lastFieldWasQuoted = false

    /// Reads fields up to the end of a record (a line break outside quotes, or the end of the file).
    private mutating func readRecord() throws(ImportParseError) -> [String] {
        var fields: [String] = []
        while true {
            let (field, endsRecord) = try readField()
            fields.append(field)
            if endsRecord { return fields }
        }
    }

    /// Reads one field and the separator after it; returns whether the separator ended the record.
    private mutating func readField() throws(ImportParseError) -> (String, endsRecord: Bool) {
        var field: [UInt8] = []
        let fieldLine = line
        lastFieldWasQuoted = index < bytes.count && bytes[index] == Self.quote
        if lastFieldWasQuoted {
            index += 1
            var closed = false
            while index < bytes.count {
                let byte = bytes[index]
                if byte == Self.quote {
                    if index + 1 < bytes.count && bytes[index + 1] == Self.quote {
                        field.append(Self.quote)
                        index += 2
                        continue
                    }
                    index += 1
                    closed = true
                    break
                }
                if byte == Self.newline { line += 1 }
                field.append(byte)
                index += 1
            }
            guard closed else {
                throw ImportParseError(line: fieldLine, "a quoted field starts here and is never closed")
            }
            // After the closing quote: a separator or the end.
            if index < bytes.count && !isSeparator(at: index) {
                throw ImportParseError(line: line,
                    "a quote inside a quoted field must be doubled (\"\"); here one is followed by \(describe(bytes[index]))")
            }
        } else {
            while index < bytes.count && !isSeparator(at: index) {
                if bytes[index] == Self.quote {
                    throw ImportParseError(line: line,
                        "a quote inside an unquoted field: quote the whole field and double the quote")
                }
                field.append(bytes[index])
                index += 1
            }
        }
        let text = try Self.text(field, line: fieldLine)
        return (text, endsRecord: consumeSeparator())
    }

    /// Whether a comma or a line break (`\n`, `\r\n`) is at `position`.
    private func isSeparator(at position: Int) -> Bool {
        switch bytes[position] {
        case Self.comma, Self.newline: return true
        case Self.carriageReturn: return position + 1 < bytes.count && bytes[position + 1] == Self.newline
        default: return false
        }
    }

    /// Steps over the separator at `index`, if any; returns whether it ended the record (a line break or the
    /// end of the file).
    private mutating func consumeSeparator() -> Bool {
        guard index < bytes.count else { return true }
        switch bytes[index] {
        case Self.comma:
            index += 1
            return false
        case Self.carriageReturn:
            index += 2
        default:
            index += 1
        }
        line += 1
        return true
    }

    /// A field's bytes as text.
    private static func text(_ bytes: [UInt8], line: Int) throws(ImportParseError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ImportParseError(line: line, "the text is not UTF-8: save the export as UTF-8 and import it again")
        }
        return text
    }

    private func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "\"\(Character(UnicodeScalar(byte)))\"" : "the byte 0x" + String(byte, radix: 16)
    }
}
