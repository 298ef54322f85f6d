/// A small strict reader of the XML that KeePass writes (XML 1.0's subset): elements, attributes, text, the
/// five predefined entities and numeric character references, CDATA sections, comments, processing
/// instructions (the XML declaration). A document type declaration is refused, so no entity can expand.
///
/// The input must be UTF-8. Nesting deeper than ``maximumDepth`` and elements beyond ``maximumElements`` are
/// refused, so hostile input costs memory and time in proportion to its size and never crashes the reader.
struct XMLReader {
    /// The deepest nesting of elements read.
    static let maximumDepth = 256
    /// The most elements read.
    static let maximumElements = 4_000_000

    private let bytes: [UInt8]
    private var position = 0
    private var elementCount = 0

    /// The root element of `document`.
    ///
    /// - Throws: ``XMLParseError`` at the first thing that is not well-formed XML of this subset.
    static func parse(_ document: [UInt8]) throws(XMLParseError) -> XMLTreeElement {
        var reader = XMLReader(bytes: document)
        return try reader.document()
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private mutating func document() throws(XMLParseError) -> XMLTreeElement {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw failure("the document is not valid UTF-8") }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        try misc()
        guard peek() == UInt8(ascii: "<") else { throw failure(position == bytes.count ? "the document has no root element" : "text before the root element") }
        let root = try element()
        try misc()
        guard position == bytes.count else { throw failure("content after the root element") }
        return root
    }

    /// Skips whitespace, comments and processing instructions outside the root element.
    private mutating func misc() throws(XMLParseError) {
        while true {
            skipWhitespace()
            if starts("<!--") { try comment() } else if starts("<?") { try processingInstruction() } else if starts("<!DOCTYPE") {
                throw failure("a document type declaration is not read (KeePass does not write one)")
            } else { return }
        }
    }

    /// Reads an element and everything inside it, with an explicit stack rather than recursion.
    private mutating func element() throws(XMLParseError) -> XMLTreeElement {
        var stack: [XMLTreeElement] = []
        var root: XMLTreeElement?
        repeat {
            if starts("</") {
                let start = position
                position += 2
                let name = try self.name()
                skipWhitespace()
                try expect(">")
                guard let finished = stack.popLast() else { throw failure("an end tag without a start tag") }
                guard finished.name == name else {
                    throw XMLParseError(offset: start, reason: "the end tag </\(name)> does not match <\(finished.name)>")
                }
                if stack.isEmpty { root = finished } else { stack[stack.count - 1].children.append(finished) }
            } else if starts("<!--") {
                try comment()
            } else if starts("<![CDATA[") {
                guard !stack.isEmpty else { throw failure("a CDATA section outside the root element") }
                position += 9
                guard let end = find("]]>") else { throw failure("a CDATA section does not end") }
                stack[stack.count - 1].text += String(decoding: bytes[position..<end], as: UTF8.self)
                position = end + 3
            } else if starts("<?") {
                try processingInstruction()
            } else if starts("<!") {
                throw failure("a markup declaration is not read inside an element")
            } else if peek() == UInt8(ascii: "<") {
                position += 1
                elementCount += 1
                guard elementCount <= Self.maximumElements else { throw failure("more than \(Self.maximumElements) elements") }
                guard stack.count < Self.maximumDepth else { throw failure("elements nested deeper than \(Self.maximumDepth)") }
                var element = XMLTreeElement(name: try name())
                let empty = try attributes(of: &element)
                if empty {
                    if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
                } else {
                    stack.append(element)
                }
            } else {
                guard !stack.isEmpty else { throw failure("text outside the root element") }
                stack[stack.count - 1].text += try text()
            }
        } while root == nil
        return root!
    }

    /// Reads the attributes of a start tag up to its `>` or `/>`; returns whether the element is empty (`/>`).
    private mutating func attributes(of element: inout XMLTreeElement) throws(XMLParseError) -> Bool {
        while true {
            let hadSpace = skipWhitespace()
            if starts("/>") { position += 2; return true }
            if starts(">") { position += 1; return false }
            guard hadSpace else { throw failure("expected whitespace, \">\" or \"/>\" in the tag <\(element.name)>") }
            let name = try self.name()
            skipWhitespace()
            try expect("=")
            skipWhitespace()
            guard let quote = peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw failure("an attribute value is not quoted")
            }
            position += 1
            var value = ""
            while true {
                guard let byte = peek() else { throw failure("an attribute value does not end") }
                if byte == quote { position += 1; break }
                if byte == UInt8(ascii: "<") { throw failure("\"<\" in an attribute value") }
                if byte == UInt8(ascii: "&") { value += try reference(); continue }
                let start = position
                while let next = peek(), next != quote, next != UInt8(ascii: "<"), next != UInt8(ascii: "&") { position += 1 }
                value += String(decoding: bytes[start..<position], as: UTF8.self)
            }
            guard element.attribute(name) == nil else { throw failure("the attribute \(name) is given twice") }
            element.attributes.append((name, value))
        }
    }

    /// Character data up to the next `<`, references resolved.
    private mutating func text() throws(XMLParseError) -> String {
        var text = ""
        while let byte = peek(), byte != UInt8(ascii: "<") {
            if byte == UInt8(ascii: "&") { text += try reference(); continue }
            let start = position
            while let next = peek(), next != UInt8(ascii: "<"), next != UInt8(ascii: "&") { position += 1 }
            let run = bytes[start..<position]
            if let close = find("]]>", in: start..<position) { throw XMLParseError(offset: close, reason: "\"]]>\" in text") }
            text += String(decoding: run, as: UTF8.self)
        }
        if peek() == nil { throw failure("the document ends inside an element") }
        return text
    }

    /// An entity or character reference, from its `&` to its `;`.
    private mutating func reference() throws(XMLParseError) -> String {
        let start = position
        position += 1
        guard let end = bytes[position..<min(bytes.count, position + 12)].firstIndex(of: UInt8(ascii: ";")) else {
            throw XMLParseError(offset: start, reason: "\"&\" that starts no reference")
        }
        let body = String(decoding: bytes[position..<end], as: UTF8.self)
        position = end + 1
        switch body {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        case "apos": return "'"
        default: break
        }
        var value: UInt32?
        if body.hasPrefix("#x") { value = UInt32(body.dropFirst(2), radix: 16) } else if body.hasPrefix("#") { value = UInt32(body.dropFirst(), radix: 10) }
        guard let body = value.flatMap({ $0 }) else {
            throw XMLParseError(offset: start, reason: "the reference &\(String(decoding: bytes[(start + 1)..<end], as: UTF8.self)); is not one XML defines")
        }
        guard let scalar = Unicode.Scalar(body), Self.isXMLCharacter(scalar) else {
            throw XMLParseError(offset: start, reason: "the character reference names U+\(String(body, radix: 16, uppercase: true)), not an XML character")
        }
        return String(Character(scalar))
    }

    /// Whether XML 1.0 allows `scalar` in a document (its production Char).
    private static func isXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return true
        default: return false
        }
    }

    private mutating func name() throws(XMLParseError) -> String {
        let start = position
        while let byte = peek(), !Self.endsName(byte) { position += 1 }
        guard position > start else { throw failure("a name is missing") }
        guard !(bytes[start] >= UInt8(ascii: "0") && bytes[start] <= UInt8(ascii: "9")) && bytes[start] != UInt8(ascii: "-")
                && bytes[start] != UInt8(ascii: ".") else { throw XMLParseError(offset: start, reason: "a name starts with a digit, \"-\" or \".\"") }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private static func endsName(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: "!"),
             UInt8(ascii: "?"), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "&"), UInt8(ascii: ";"): return true
        default: return byte < 0x20
        }
    }

    private mutating func comment() throws(XMLParseError) {
        position += 4
        guard let end = find("--") else { throw failure("a comment does not end") }
        guard end + 2 < bytes.count, bytes[end + 2] == UInt8(ascii: ">") else { throw XMLParseError(offset: end, reason: "\"--\" inside a comment") }
        position = end + 3
    }

    private mutating func processingInstruction() throws(XMLParseError) {
        position += 2
        guard let end = find("?>") else { throw failure("a processing instruction does not end") }
        position = end + 2
    }

    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        let start = position
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
        return position > start
    }

    private mutating func expect(_ text: String) throws(XMLParseError) {
        guard starts(text) else { throw failure("expected \"\(text)\"") }
        position += text.utf8.count
    }

    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private func starts(_ text: String) -> Bool {
        let pattern = Array(text.utf8)
        guard bytes.count - position >= pattern.count else { return false }
        for (index, byte) in pattern.enumerated() where bytes[position + index] != byte { return false }
        return true
    }

    /// The offset of the next `text` from the current position (or within `range`).
    private func find(_ text: String, in range: Range<Int>? = nil) -> Int? {
        let pattern = Array(text.utf8)
        let range = range ?? position..<bytes.count
        guard range.count >= pattern.count else { return nil }
        var index = range.lowerBound
        while index + pattern.count <= range.upperBound {
            if bytes[index] == pattern[0] {
                var matches = true
                for offset in 1..<pattern.count where bytes[index + offset] != pattern[offset] { matches = false; break }
                if matches { return index }
            }
            index += 1
        }
        return nil
    }

    private func failure(_ reason: String) -> XMLParseError {
        XMLParseError(offset: position, reason: reason)
    }
}
