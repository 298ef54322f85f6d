import KeychainFile

/// A small DER reader and writer, for the structures `kcf` looks into itself: private key files and the
/// common name of a certificate's subject. (Certificates as such are parsed by the library.)
enum DER {
    /// One element: its tag byte and its content octets.
    struct Element {
        let tag: UInt8
        let content: [UInt8]

        /// The elements inside a constructed element (SEQUENCE, SET, context tag).
        func children() throws(CommandError) -> [Element] {
            var reader = Reader(content)
            var children: [Element] = []
            while !reader.isAtEnd { children.append(try reader.next()) }
            return children
        }
    }

    /// Reads elements one after another from bytes.
    struct Reader {
        private let bytes: [UInt8]
        private var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { position >= bytes.count }

        /// The next element.
        ///
        /// - Throws: `CommandError` (invalid input) for a truncated element, a multi-byte tag or an
        ///   indefinite or oversized length.
        mutating func next() throws(CommandError) -> Element {
            guard position + 2 <= bytes.count else { throw DER.malformed("truncated element at byte \(position)") }
            let tag = bytes[position]
            guard tag & 0x1F != 0x1F else { throw DER.malformed("multi-byte tag at byte \(position)") }
            var length = Int(bytes[position + 1])
            position += 2
            if length & 0x80 != 0 {
                let count = length & 0x7F
                guard count >= 1, count <= 4, position + count <= bytes.count else {
                    throw DER.malformed("bad length at byte \(position - 1)")
                }
                length = 0
                for byte in bytes[position..<(position + count)] { length = length << 8 | Int(byte) }
                position += count
            }
            guard length <= bytes.count - position else { throw DER.malformed("element runs past the end at byte \(position)") }
            let content = Array(bytes[position..<(position + length)])
            position += length
            return Element(tag: tag, content: content)
        }
    }

    /// Reads exactly one element filling `bytes`.
    static func single(_ bytes: [UInt8]) throws(CommandError) -> Element {
        var reader = Reader(bytes)
        let element = try reader.next()
        guard reader.isAtEnd else { throw malformed("bytes after the end of the structure") }
        return element
    }

    /// An element encoded: tag, definite length, content (the library's ``DERWriter``).
    static func encode(tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        DERWriter.element(tag, content)
    }

    /// The dotted text of an OBJECT IDENTIFIER's content octets, such as `1.2.840.10045.2.1`.
    static func objectIdentifier(_ content: [UInt8]) -> String {
        guard let first = content.first else { return "" }
        var parts = [Int(first) / 40, Int(first) % 40]
        var value = 0
        for byte in content.dropFirst() {
            value = value << 7 | Int(byte & 0x7F)
            if byte & 0x80 == 0 {
                parts.append(value)
                value = 0
            }
        }
        return parts.map(String.init).joined(separator: ".")
    }

    static func malformed(_ what: String) -> CommandError {
        .failure("malformed DER: \(what)", .invalidParameter)
    }
}
