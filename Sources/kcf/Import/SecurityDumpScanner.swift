/// Reads the values of one line of `security dump-keychain` text, as Apple's `print_buffer` writes them
/// (Security, SecurityTool keychain_utilities.c):
///
/// - bytes that are all printable ASCII other than `\`: in quotes, as they are — a `"` inside is not escaped;
/// - bytes with none printable: `0x` and their hex, then one space;
/// - a mix: `0x` and their hex, two spaces, then the bytes in quotes with every other byte (and `\`) as a
///   backslash and three octal digits (`\000`, `\134`);
/// - no bytes: nothing; an absent attribute: `<NULL>`.
///
/// A 32-bit value (a tag, a `<uint32>`) is printed as its four bytes, most significant first. When both the
/// hex and the quoted form are there, they must agree. What `kcf dump-keychain` writes differently is read
/// too: `\"` and `\\` in quotes, and flags as decimal numbers.
struct SecurityDumpScanner {
    private var rest: ArraySlice<UInt8>
    /// The line, for errors.
    let line: Int

    init(_ bytes: ArraySlice<UInt8>, line: Int) {
        rest = bytes
        self.line = line
    }

    /// Whether the line is read to its end (spaces and a carriage return left over are ignored).
    var isAtEnd: Bool { rest.allSatisfy { $0 == 0x20 || $0 == 0x0D } }

    /// Steps over `literal` at the start of what is left, or throws.
    mutating func expect(_ literal: String) throws(ImportParseError) {
        let bytes = Array(literal.utf8)
        guard rest.starts(with: bytes) else {
            let wanted = literal == "\"" ? "a quote" : "\"\(literal)\""
            throw ImportParseError(line: line, "expected \(wanted) at \"\(Self.excerpt(rest))\"")
        }
        rest = rest.dropFirst(bytes.count)
    }

    /// Steps over `literal` if it is next; returns whether it was.
    mutating func skip(_ literal: String) -> Bool {
        let bytes = Array(literal.utf8)
        guard rest.starts(with: bytes) else { return false }
        rest = rest.dropFirst(bytes.count)
        return true
    }

    /// The text up to `terminator` (not included), which is stepped over.
    mutating func text(upTo terminator: UInt8) throws(ImportParseError) -> String {
        guard let end = rest.firstIndex(of: terminator) else {
            throw ImportParseError(line: line, "\"\(Character(UnicodeScalar(terminator)))\" missing in \"\(Self.excerpt(rest))\"")
        }
        let text = String(decoding: rest[..<end], as: UTF8.self)
        rest = rest[(end + 1)...]
        return text
    }

    /// A buffer of exactly `count` bytes followed by more on the line (a tag, a class): its quoted form ends
    /// after `count` bytes.
    mutating func fixedBuffer(count: Int) throws(ImportParseError) -> [UInt8] {
        var hex: [UInt8]?
        if rest.starts(with: Array("0x".utf8)) {
            rest = rest.dropFirst(2)
            let digits = try hexDigits()
            guard digits.count == count else { throw ImportParseError(line: line, "expected \(count) bytes in hex") }
            // One space after hex alone; two before a quoted form.
            while rest.first == 0x20 { rest = rest.dropFirst() }
            guard rest.first == 0x22 else { return digits }
            hex = digits
        }
        try expect("\"")
        var bytes: [UInt8] = []
        while bytes.count < count {
            guard let byte = rest.first else { throw ImportParseError(line: line, "a quoted value ends early") }
            rest = rest.dropFirst()
            bytes.append(byte == 0x5C ? try escaped() : byte)
        }
        try expect("\"")
        return try agreeing(hex, bytes)
    }

    /// A buffer that runs to the end of the line: bytes, or `nil` for `<NULL>` when `nullable`.
    mutating func bufferToEnd(nullable: Bool) throws(ImportParseError) -> [UInt8]? {
        var end = rest.endIndex
        while end > rest.startIndex && (rest[end - 1] == 0x0D || rest[end - 1] == 0x20) { end -= 1 }
        var value = rest[..<end]
        rest = rest[end...]
        if nullable && value.elementsEqual("<NULL>".utf8) { return nil }
        if value.isEmpty { return [] }
        if let number = Self.decimal(value) { return number }
        var hex: [UInt8]?
        if value.starts(with: Array("0x".utf8)) {
            var scanner = SecurityDumpScanner(value.dropFirst(2), line: line)
            hex = try scanner.hexDigits()
            value = scanner.rest.drop { $0 == 0x20 }
            if value.isEmpty { return hex }
        }
        // The quoted form runs to the last quote of the line: quotes inside it are not escaped.
        guard value.count >= 2, value.first == 0x22, value.last == 0x22 else {
            throw ImportParseError(line: line, "not a value as security prints one: \"\(Self.excerpt(value))\"")
        }
        var scanner = SecurityDumpScanner(value.dropFirst().dropLast(), line: line)
        var bytes: [UInt8] = []
        while let byte = scanner.rest.first {
            scanner.rest = scanner.rest.dropFirst()
            bytes.append(byte == 0x5C ? try scanner.escaped() : byte)
        }
        return try agreeing(hex, bytes)
    }

    /// The bytes of the hex digits that follow (an even number of them).
    private mutating func hexDigits() throws(ImportParseError) -> [UInt8] {
        let digits = rest.prefix { Self.hexValue($0) != nil }
        rest = rest.dropFirst(digits.count)
        let values = digits.compactMap(Self.hexValue)
        guard !values.isEmpty, values.count % 2 == 0 else {
            throw ImportParseError(line: line, "an odd number of hex digits (or none) after 0x")
        }
        return stride(from: 0, to: values.count, by: 2).map { values[$0] << 4 | values[$0 + 1] }
    }

    /// The byte of a backslash escape, the backslash read: three octal digits, or (as `kcf dump-keychain`
    /// writes them) a quote or a backslash.
    private mutating func escaped() throws(ImportParseError) -> UInt8 {
        if let next = rest.first, next == 0x22 || next == 0x5C {
            rest = rest.dropFirst()
            return next
        }
        let digits = Array(rest.prefix(3))
        guard digits.count == 3, digits.allSatisfy({ (0x30...0x37).contains($0) }), digits[0] <= 0x33 else {
            throw ImportParseError(line: line, "a backslash in a quoted value is not followed by three octal digits")
        }
        rest = rest.dropFirst(3)
        return (digits[0] - 0x30) << 6 | (digits[1] - 0x30) << 3 | (digits[2] - 0x30)
    }

    /// The bytes, checked against the hex form when there was one.
    private func agreeing(_ hex: [UInt8]?, _ quoted: [UInt8]) throws(ImportParseError) -> [UInt8] {
        if let hex, hex != quoted {
            throw ImportParseError(line: line, "the hex and the quoted form of a value differ")
        }
        return quoted
    }

    /// The four bytes, most significant first, of a number written in decimal (as `kcf dump-keychain` writes a
    /// flag: `"sync"<sint32>=0`); `nil` when `text` is not one.
    private static func decimal(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard !text.isEmpty, text.count <= 11, let number = Int64(String(decoding: text, as: UTF8.self)),
              let bits = UInt32(exactly: number) ?? Int32(exactly: number).map({ UInt32(bitPattern: $0) }) else { return nil }
        return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: bits >> UInt32($0)) }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }

    /// The start of `bytes` as text for a message.
    static func excerpt(_ bytes: ArraySlice<UInt8>) -> String {
        let text = String(decoding: bytes.prefix(40), as: UTF8.self)
        return bytes.count > 40 ? text + "…" : text
    }
}
