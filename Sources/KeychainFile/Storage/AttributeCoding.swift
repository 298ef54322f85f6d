/// The plaintext of an attributes box (SPEC.md §7.3), written and read exactly:
///
/// ```
/// u8 version (1) ‖ item id (16) ‖ u8 item class ‖ u16 count A
///     ‖ A × (u16 tag ‖ u8 type ‖ u32 length ‖ value)
/// ```
///
/// Attributes appear in strictly increasing tag order; integers and dates are 8-byte big-endian two's
/// complement, booleans one byte. Decoding is strict (see ``decode(_:)``).
enum AttributeCoding {
    /// The encoding version this code writes and reads.
    static let version: UInt8 = 1
    /// Bytes before the first attribute: version, item id, class and count.
    static let headerByteCount = 20
    /// Bytes before an attribute's value: tag, type and length.
    static let attributeHeaderByteCount = 7
    /// The fewest attributes an encoded item has: creationDate and modificationDate are required.
    static let minimumCount = 2

    /// Returns the plaintext of the attributes box of item `id`.
    ///
    /// The caller (the writer) has set creationDate and modificationDate and applied
    /// ``ItemAttributes/withDefaults()``; without the two dates the result would not decode.
    static func encode(id: ItemID, attributes: ItemAttributes) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: encodedByteCount(attributes)) { buffer, initialized in
            write(id: id, attributes: attributes, into: UnsafeMutableRawBufferPointer(buffer))
            initialized = buffer.count
        }
    }

    /// The size of the plaintext ``encode(id:attributes:)`` returns.
    static func encodedByteCount(_ attributes: ItemAttributes) -> Int {
        headerByteCount + attributes.encoded.count
    }

    /// Writes what ``encode(id:attributes:)`` returns into `out`, which holds exactly
    /// ``encodedByteCount(_:)`` bytes, without allocating.
    static func write(id: ItemID, attributes: ItemAttributes, into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count == encodedByteCount(attributes), "the plaintext's size")
        let base = out.baseAddress!
        base.storeBytes(of: version, as: UInt8.self)
        id.withUnsafeBytes { (base + 1).copyMemory(from: $0.baseAddress!, byteCount: 16) }
        base.storeBytes(of: attributes.itemClass.rawValue, toByteOffset: 17, as: UInt8.self)
        // At most 64 attributes (ItemAttributes.maximumCount), so the count fits in 16 bits.
        base.storeBytes(of: UInt16(truncatingIfNeeded: attributes.count).bigEndian, toByteOffset: 18, as: UInt16.self)
        // ItemAttributes keeps its attributes in exactly the encoding that follows the header.
        attributes.encoded.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[headerByteCount...]).copyMemory(from: $0) }
    }

    /// Appends one attribute, `tag ‖ type ‖ length ‖ value`, to `out` (see ``writeAttribute(tag:value:into:)``).
    static func appendAttribute(tag: UInt16, value: StoredAttributeValue, to out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: attributeHeaderByteCount + valueByteCount(value)))
        out.withUnsafeMutableBytes { raw in
            _ = writeAttribute(tag: tag, value: value, into: UnsafeMutableRawBufferPointer(rebasing: raw[start...]))
        }
    }

    /// Writes one attribute, `tag ‖ type ‖ length ‖ value`, at the start of `out`, which must have room for
    /// ``attributeHeaderByteCount`` + ``valueByteCount(_:)`` bytes; returns the number of bytes written. The one
    /// place an attribute's encoding is written.
    static func writeAttribute(tag: UInt16, value: StoredAttributeValue, into out: UnsafeMutableRawBufferPointer) -> Int {
        let length = valueByteCount(value)
        let total = attributeHeaderByteCount + length
        precondition(out.count >= total, "room for the attribute")
        let base = out.baseAddress!
        base.storeBytes(of: tag.bigEndian, as: UInt16.self)
        base.storeBytes(of: value.type.rawValue, toByteOffset: 2, as: UInt8.self)
        // Values are at most 65,535 bytes (checked when they were stored), so the length fits in 32 bits.
        base.storeBytes(of: UInt32(truncatingIfNeeded: length).bigEndian, toByteOffset: 3, as: UInt32.self)
        value.withEncodedValue { bytes in
            precondition(bytes.count == length, "the value's length")
            if let source = bytes.baseAddress { (base + attributeHeaderByteCount).copyMemory(from: source, byteCount: length) }
        }
        return total
    }

    /// The number of bytes of the encoded value.
    static func valueByteCount(_ value: StoredAttributeValue) -> Int {
        switch value {
        case .string(let text): return text.utf8.count
        case .bytes(let bytes): return bytes.count
        case .integer, .date: return 8
        case .boolean: return 1
        }
    }
}
