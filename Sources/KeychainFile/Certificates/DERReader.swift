/// A small, bounds-checked reader of DER (ITU-T X.690 distinguished encoding), enough to take a
/// certificate apart.
///
/// It reads one TLV element at a time from a window of one shared byte array, and opens a constructed
/// element (or the DER inside an OCTET STRING) as a nested reader. Every offset it reports is from the
/// start of the whole input. It accepts only what DER allows where a certificate needs it: single-byte
/// tags, definite lengths in their shortest form with at most four length bytes, and at most
/// ``maximumDepth`` nested elements opened one inside another. Nothing here traps on any input.
///
/// For example:
/// ```swift
/// var reader = DERReader([0x30, 0x03, 0x02, 0x01, 0x05])
/// let sequence = try reader.readElement(tag: 0x30, "SEQUENCE")
/// var inner = try reader.reader(into: sequence)
/// let integer = try inner.readElement(tag: 0x02, "INTEGER")
/// assert(inner.content(of: integer) == [0x05])
/// ```
struct DERReader {
    /// The most elements that can be opened one inside another: a reader's ``depth`` never exceeds it.
    static let maximumDepth = 32
    /// The most bytes a long-form length may have.
    static let maximumLengthByteCount = 4

    /// One element: its tag and where its header and contents are in the input.
    struct Element: Equatable {
        /// The identifier octet, such as 0x30 for SEQUENCE.
        let tag: UInt8
        /// The offset of the tag.
        let start: Int
        /// The offset of the first content byte.
        let contentStart: Int
        /// The offset just after the last content byte.
        let end: Int

        /// Whether the element is constructed (bit 6 of the tag), so that its contents are elements.
        var isConstructed: Bool { tag & 0x20 != 0 }
    }

    /// The whole input, shared by every nested reader.
    private let bytes: [UInt8]
    /// The offset of the next element to read.
    private(set) var position: Int
    /// The end of this reader's window.
    private let end: Int
    /// How many opened elements enclose this reader's window: 0 for the whole input.
    let depth: Int

    /// Creates a reader over the whole of `bytes`.
    init(_ bytes: [UInt8]) {
        self.init(bytes: bytes, position: 0, end: bytes.count, depth: 0)
    }

    private init(bytes: [UInt8], position: Int, end: Int, depth: Int) {
        self.bytes = bytes
        self.position = position
        self.end = end
        self.depth = depth
    }

    /// Whether every element of the window has been read.
    var isAtEnd: Bool { position >= end }

    /// The tag of the next element, or `nil` at the end of the window.
    func peekTag() -> UInt8? {
        isAtEnd ? nil : bytes[position]
    }

    /// Reads the next element, which must have `tag`.
    ///
    /// - Parameters:
    ///   - tag: The expected identifier octet.
    ///   - what: What the element is, for the error message.
    /// - Throws: `DERError` when the window is empty, the tag differs, or the header is malformed.
    mutating func readElement(tag: UInt8, _ what: String) throws(DERError) -> Element {
        guard let found = peekTag() else {
            throw DERError(offset: position, reason: "truncated: \(what) missing")
        }
        guard found == tag else {
            throw DERError(offset: position, reason: "expected \(what) (tag \(hex(tag))), found tag \(hex(found))")
        }
        return try readElement(what)
    }

    /// Reads the next element, whatever its tag.
    ///
    /// - Parameter what: What the element is, for the error message.
    /// - Throws: `DERError` for a missing or high-number tag, and for a length that is indefinite, not in
    ///   its shortest form, longer than four bytes, truncated, or beyond the end of the window.
    mutating func readElement(_ what: String) throws(DERError) -> Element {
        let start = position
        guard start < end else { throw DERError(offset: start, reason: "truncated: \(what) missing") }
        let tag = bytes[start]
        guard tag & 0x1f != 0x1f else {
            throw DERError(offset: start, reason: "\(what): multi-byte tag \(hex(tag)) not supported")
        }
        let lengthOffset = start + 1
        guard lengthOffset < end else { throw DERError(offset: lengthOffset, reason: "\(what): truncated length") }
        let first = bytes[lengthOffset]
        var contentStart = lengthOffset + 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            guard first != 0x80 else {
                throw DERError(offset: lengthOffset, reason: "\(what): indefinite length not allowed in DER")
            }
            let count = Int(first & 0x7f)
            guard count <= Self.maximumLengthByteCount else {
                throw DERError(offset: lengthOffset, reason: "\(what): \(count) length bytes, more than 4")
            }
            guard count <= end - contentStart else {
                throw DERError(offset: lengthOffset, reason: "\(what): truncated length")
            }
            guard bytes[contentStart] != 0 else {
                throw DERError(offset: lengthOffset, reason: "\(what): length has a leading zero byte (not minimal)")
            }
            // At most four bytes, so the value is below 2^32 and fits in `Int` on 64-bit platforms; the
            // arithmetic is on UInt64 so that it cannot overflow anywhere.
            var value: UInt64 = 0
            for index in contentStart..<(contentStart + count) {
                value = value << 8 | UInt64(bytes[index])
            }
            guard value >= 0x80 else {
                throw DERError(offset: lengthOffset, reason: "\(what): long-form length \(value) (not minimal)")
            }
            guard let converted = Int(exactly: value) else {
                throw DERError(offset: lengthOffset, reason: "\(what): length \(value) too large")
            }
            length = converted
            contentStart += count
        }
        guard length <= end - contentStart else {
            throw DERError(
                offset: lengthOffset,
                reason: "\(what): length \(length) beyond the end (\(end - contentStart) bytes remain)")
        }
        position = contentStart + length
        return Element(tag: tag, start: start, contentStart: contentStart, end: position)
    }

    /// Returns a reader over the contents of `element`, one level deeper.
    ///
    /// Use it for constructed elements, and for the DER carried inside an OCTET STRING.
    ///
    /// - Throws: `DERError` when the new reader would be deeper than ``maximumDepth``.
    func reader(into element: Element) throws(DERError) -> DERReader {
        guard depth < Self.maximumDepth else {
            throw DERError(offset: element.start, reason: "nesting deeper than \(Self.maximumDepth) levels")
        }
        return DERReader(bytes: bytes, position: element.contentStart, end: element.end, depth: depth + 1)
    }

    /// Throws unless every element of the window has been read.
    ///
    /// - Parameter what: The enclosing element, for the error message.
    func expectEnd(_ what: String) throws(DERError) {
        guard isAtEnd else {
            throw DERError(offset: position, reason: "\(end - position) unexpected bytes at the end of \(what)")
        }
    }

    /// The content bytes of `element`.
    func content(of element: Element) -> [UInt8] {
        Array(bytes[element.contentStart..<element.end])
    }

    /// The whole encoding of `element`: tag, length and contents.
    func encoding(of element: Element) -> [UInt8] {
        Array(bytes[element.start..<element.end])
    }

    /// Checks that the contents of `element`, and of every constructed element inside it, are a sequence
    /// of well-formed elements that fills them exactly, no deeper than ``maximumDepth``.
    func validateTree(of element: Element) throws(DERError) {
        guard element.isConstructed else { return }
        var inner = try reader(into: element)
        while !inner.isAtEnd {
            let child = try inner.readElement("element")
            try inner.validateTree(of: child)
        }
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16)
        return "0x" + (byte < 0x10 ? "0" + digits : digits)
    }
}

extension DERReader {
    /// Reads an INTEGER that must be non-negative and at most `maximum`.
    ///
    /// - Parameters:
    ///   - what: What the integer is, for the error message.
    ///   - maximum: The largest value accepted.
    /// - Throws: `DERError` for another element, an empty, negative or non-minimal INTEGER, or one above `maximum`.
    mutating func readInteger(_ what: String, maximum: Int) throws(DERError) -> Int {
        let element = try readElement(tag: 0x02, what)
        let content = self.content(of: element)
        guard let first = content.first else { throw DERError(offset: element.start, reason: "\(what): empty INTEGER") }
        guard first & 0x80 == 0 else { throw DERError(offset: element.start, reason: "\(what): negative INTEGER") }
        guard content.count == 1 || first != 0 || content[1] & 0x80 != 0 else {
            throw DERError(offset: element.start, reason: "\(what): INTEGER not in its shortest form")
        }
        var value = 0
        for byte in content {
            guard value <= (maximum - Int(byte)) / 256 else {
                throw DERError(offset: element.start, reason: "\(what): \(content.count)-byte INTEGER above \(maximum)")
            }
            value = value << 8 | Int(byte)
        }
        guard value <= maximum else { throw DERError(offset: element.start, reason: "\(what): \(value) is above \(maximum)") }
        return value
    }
}
