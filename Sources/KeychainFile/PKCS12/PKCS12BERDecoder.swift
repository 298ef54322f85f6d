/// Re-encodes the BER that Java keytool, macOS and older OpenSSL write in PKCS #12 files — indefinite lengths,
/// constructed OCTET STRINGs, long-form lengths that are not the shortest — as DER, so that the DER reader can
/// take it. Used for PKCS #12 input only: certificates and everything else stay strict DER.
///
/// DER input comes out byte for byte the same. The contents of primitive elements (a certificate inside its
/// OCTET STRING, say) are copied, never looked into. Bounded: at most ``maximumDepth`` nested elements, lengths
/// of at most four bytes, and every length checked against the bytes left, so hostile input gives an error.
enum PKCS12BERDecoder {
    /// The most constructed elements one inside another, as ``DERReader/maximumDepth``.
    static let maximumDepth = DERReader.maximumDepth

    /// The DER encoding of the single BER element that `bytes` holds.
    ///
    /// - Parameter context: Where the offsets count from, when not the file, for the error.
    /// - Throws: ``PKCS12Error/malformed(offset:reason:)`` for what is not BER (with the offset in `bytes`), for
    ///   bytes after the element, and beyond the limits.
    static func der(_ bytes: [UInt8], _ what: String, context: String?) throws(PKCS12Error) -> [UInt8] {
        try PKCS12Error.readingDER(context) { () throws(DERError) in
            var position = 0
            let element = try reencode(bytes, at: &position, limit: bytes.count, depth: 0, what)
            guard position == bytes.count else {
                throw DERError(offset: position, reason: "\(bytes.count - position) unexpected bytes after \(what)")
            }
            return element
        }
    }

    /// Re-encodes the element at `position` (ending by `limit`) as DER and moves `position` past it.
    private static func reencode(_ bytes: [UInt8], at position: inout Int, limit: Int, depth: Int, _ what: String)
        throws(DERError) -> [UInt8] {
        let start = position
        guard start < limit else { throw DERError(offset: start, reason: "truncated: \(what) missing") }
        let tag = bytes[start]
        guard tag & 0x1f != 0x1f else { throw DERError(offset: start, reason: "\(what): multi-byte tag not supported") }
        guard tag != 0 else { throw DERError(offset: start, reason: "\(what): an end-of-contents marker where an element belongs") }
        guard start + 1 < limit else { throw DERError(offset: start + 1, reason: "\(what): truncated length") }
        let first = bytes[start + 1]
        position = start + 2
        let isConstructed = tag & 0x20 != 0
        var contentEnd: Int?  // nil: indefinite, up to the end-of-contents marker
        if first < 0x80 {
            contentEnd = position + Int(first)
        } else if first == 0x80 {
            guard isConstructed else { throw DERError(offset: start + 1, reason: "\(what): indefinite length on a primitive element") }
        } else {
            let count = Int(first & 0x7f)
            guard count <= DERReader.maximumLengthByteCount else {
                throw DERError(offset: start + 1, reason: "\(what): \(count) length bytes, more than 4")
            }
            guard count <= limit - position else { throw DERError(offset: start + 1, reason: "\(what): truncated length") }
            // Summed in 64 bits and checked against the bytes left before it becomes an offset, so that four
            // length bytes cannot overflow an Int of 32 bits.
            var value: UInt64 = 0
            for index in position..<(position + count) { value = value << 8 | UInt64(bytes[index]) }
            position += count
            guard value <= UInt64(limit - position) else {
                throw DERError(offset: start + 1, reason: "\(what): length \(value) beyond the end (\(limit - position) bytes remain)")
            }
            contentEnd = position + Int(value)
        }
        if let contentEnd, contentEnd > limit {
            throw DERError(offset: start + 1, reason: "\(what): length \(contentEnd - position) beyond the end (\(limit - position) bytes remain)")
        }
        guard isConstructed else {
            let end = contentEnd ?? position
            defer { position = end }
            return encode(tag, bytes[position..<end])
        }
        guard depth < maximumDepth else { throw DERError(offset: start, reason: "nesting deeper than \(maximumDepth) levels") }
        var content: [UInt8] = []
        while true {
            if let contentEnd {
                if position == contentEnd { break }
            } else {
                guard position + 1 < limit else { throw DERError(offset: position, reason: "\(what): truncated: end-of-contents missing") }
                if bytes[position] == 0 {
                    guard bytes[position + 1] == 0 else {
                        throw DERError(offset: position, reason: "\(what): an end-of-contents marker with a length")
                    }
                    position += 2
                    break
                }
            }
            let child = try reencode(bytes, at: &position, limit: contentEnd ?? limit, depth: depth + 1, "an element of \(what)")
            if tag == 0x24 {
                // A constructed OCTET STRING: its pieces, themselves OCTET STRINGs, joined into one.
                guard child.first == 0x04 else {
                    throw DERError(offset: start, reason: "\(what): a constructed OCTET STRING holding another type")
                }
                content += child[headerLength(child)...]
            } else {
                content += child
            }
        }
        return encode(tag == 0x24 ? 0x04 : tag, content[...])
    }

    /// The length of the DER header at the start of `element`.
    private static func headerLength(_ element: [UInt8]) -> Int {
        element[1] < 0x80 ? 2 : 2 + Int(element[1] & 0x7f)
    }

    /// `tag`, the shortest definite length of `content`, and `content`.
    private static func encode(_ tag: UInt8, _ content: ArraySlice<UInt8>) -> [UInt8] {
        var header: [UInt8] = [tag]
        if content.count < 0x80 {
            header.append(UInt8(content.count))
        } else {
            var lengthBytes: [UInt8] = []
            var remaining = content.count
            while remaining > 0 {
                lengthBytes.insert(UInt8(remaining & 0xff), at: 0)
                remaining >>= 8
            }
            header.append(0x80 | UInt8(lengthBytes.count))
            header += lengthBytes
        }
        return header + content
    }
}
