/// Reads the text `security dump-keychain` prints (with `-d`, the data of each item) into its items.
///
/// Each item is a `keychain: "PATH"` line, a `version: N` line (macOS 10.12 and later), `class: ` and the
/// class, `attributes:`, one indented line per attribute (`    "acct"<blob>="ann"`), then with `-d` a `data:`
/// line and the data on the line after it (empty for no bytes). With `-a` an `access:` block follows, with `-r`
/// a `raw data:` line and its value; both are read and left out. Values are read by ``SecurityDumpScanner``.
/// Lines end with `\n` (`\r\n` is accepted). Anything else is an error that names the line: a file that is not
/// wholly such text is not imported at all.
enum SecurityDumpReader {
    /// The items of `bytes`, in order.
    ///
    /// - Throws: ``ImportParseError`` naming the first line that is not part of such a dump.
    static func items(_ bytes: [UInt8]) throws(ImportParseError) -> [SecurityDumpItem] {
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        var items: [SecurityDumpItem] = []
        var current: SecurityDumpItem?
        var inAttributes = false
        var index = 0
        while index < lines.count {
            let number = index + 1
            let line = lines[index]
            index += 1
            var scanner = SecurityDumpScanner(line, line: number)
            if scanner.skip("keychain: ") {
                if let current { items.append(try finished(current)) }
                _ = try scanner.bufferToEnd(nullable: false)
                current = SecurityDumpItem(line: number)
                inAttributes = false
                continue
            }
            guard var item = current else {
                if scanner.isAtEnd { continue }
                throw ImportParseError(line: number, "expected \"keychain: \" to start an item, as security dump-keychain prints it")
            }
            if line.starts(with: Array("    ".utf8)) && inAttributes {
                var attribute = SecurityDumpScanner(line.dropFirst(4), line: number)
                let tag = try attribute.fixedBuffer(count: 4)
                try attribute.expect("<")
                let format = try attribute.text(upTo: UInt8(ascii: ">"))
                try attribute.expect("=")
                let value = try attribute.bufferToEnd(nullable: true)
                item.attributes.append(.init(tag: tag.reduce(0) { $0 << 8 | UInt32($1) }, format: format, value: value, line: number))
            } else if scanner.skip("version: ") {
                let digits = line.dropFirst(9).filter { $0 != 0x20 && $0 != 0x0D }
                guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }), item.itemClass == nil else {
                    throw ImportParseError(line: number, "a version line out of place or without a number")
                }
            } else if scanner.skip("class: ") {
                guard item.itemClass == nil else { throw ImportParseError(line: number, "a second class line for one item") }
                let code = try scanner.fixedBuffer(count: 4)
                guard scanner.isAtEnd else { throw ImportParseError(line: number, "more after the class") }
                item.itemClass = code.reduce(0) { $0 << 8 | UInt32($1) }
            } else if scanner.skip("attributes:") && scanner.isAtEnd {
                guard item.itemClass != nil else { throw ImportParseError(line: number, "attributes before the class") }
                inAttributes = true
            } else if scanner.skip("data:") && scanner.isAtEnd {
                // The value is on the next line; no line at all is no bytes (a file cut after its last newline).
                if index < lines.count {
                    var value = SecurityDumpScanner(lines[index], line: index + 1)
                    item.data = try value.bufferToEnd(nullable: false)
                    index += 1
                } else {
                    item.data = []
                }
                inAttributes = false
            } else if scanner.skip("raw data:") && scanner.isAtEnd {
                guard index < lines.count else { throw ImportParseError(line: number, "the file ends after \"raw data:\"") }
                index += 1
                inAttributes = false
            } else if scanner.skip("access: ") {
                // dump-keychain -a: the entries are indented under it.
                item.hadAccessList = true
                while index < lines.count && lines[index].first == 0x20 { index += 1 }
                inAttributes = false
            } else if line.elementsEqual("no access control for this item".utf8) {
                inAttributes = false
            } else if scanner.isAtEnd {
                // An empty line: security prints none, but one more or less changes nothing.
            } else {
                throw ImportParseError(line: number,
                    "not a line of security dump-keychain output: \"\(SecurityDumpScanner.excerpt(line))\"")
            }
            current = item
        }
        if let current { items.append(try finished(current)) }
        return items
    }

    /// The item, checked to have a class.
    private static func finished(_ item: SecurityDumpItem) throws(ImportParseError) -> SecurityDumpItem {
        guard item.itemClass != nil else { throw ImportParseError(line: item.line, "an item without a class line") }
        return item
    }
}
