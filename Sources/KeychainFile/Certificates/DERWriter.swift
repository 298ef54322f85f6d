/// Builds DER (ITU-T X.690) elements from their contents: definite lengths in their shortest form, the
/// counterpart of ``DERReader`` for the structures the library writes (PKCS #12 files).
///
/// For example, `SEQUENCE { INTEGER 3 }`:
/// ```swift
/// let encoded = DERWriter.sequence(DERWriter.integer(3))   // 30 03 02 01 03
/// ```
package enum DERWriter {
    /// An element: `tag`, the length of `content` in its shortest form, then `content`.
    package static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var encoded = [tag]
        if content.count < 0x80 {
            encoded.append(UInt8(content.count))
        } else {
            var length = content.count
            var lengthBytes: [UInt8] = []
            while length > 0 {
                lengthBytes.insert(UInt8(length & 0xff), at: 0)
                length >>= 8
            }
            encoded.append(0x80 | UInt8(lengthBytes.count))
            encoded += lengthBytes
        }
        return encoded + content
    }

    /// A SEQUENCE of the concatenated `elements`.
    static func sequence(_ elements: [UInt8]...) -> [UInt8] { element(0x30, elements.flatMap { $0 }) }

    /// A SET OF `elements`, sorted by their encodings as DER requires.
    static func set(of elements: [[UInt8]]) -> [UInt8] {
        element(0x31, elements.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 })
    }

    /// An OCTET STRING.
    static func octetString(_ bytes: [UInt8]) -> [UInt8] { element(0x04, bytes) }

    /// An OBJECT IDENTIFIER from its content octets.
    static func objectIdentifier(_ content: [UInt8]) -> [UInt8] { element(0x06, content) }

    /// NULL.
    static let null: [UInt8] = [0x05, 0x00]

    /// A non-negative INTEGER in its shortest two's-complement form.
    static func integer(_ value: Int) -> [UInt8] {
        var content: [UInt8] = []
        var remaining = max(0, value)
        repeat {
            content.insert(UInt8(remaining & 0xff), at: 0)
            remaining >>= 8
        } while remaining > 0
        if content[0] & 0x80 != 0 { content.insert(0, at: 0) }
        return element(0x02, content)
    }

    /// A BMPString (UTF-16 big-endian) of `text`.
    static func bmpString(_ text: String) -> [UInt8] {
        element(0x1e, text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] })
    }
}
