// Strict decoding of the attributes box plaintext (SPEC.md §7.3). Every length is checked before it is
// used; nothing here traps on any input.

extension AttributeCoding {
    /// Decodes the plaintext of an attributes box.
    ///
    /// Rejects, with the offset of the offending field: a version other than 1; an unknown item class; an
    /// attribute count outside 2…64; tags that do not strictly increase; unknown tags; tags not allowed in
    /// the item's class; a type that is not the tag's; a wrong length for integers (8), dates (8) and
    /// booleans (1), or more than 65,535 bytes for strings and bytes; invalid UTF-8; a boolean other than
    /// 0 or 1; an integer outside the range of SPEC.md §8.2; truncation anywhere; trailing bytes; and a
    /// missing creationDate or modificationDate.
    ///
    /// - Parameter bytes: The decrypted plaintext.
    /// - Returns: The item id and its attributes.
    /// - Throws: ``AttributeDecodingError`` for the first problem found.
    static func decode(
        _ bytes: UnsafeRawBufferPointer
    ) throws(AttributeDecodingError) -> (id: ItemID, attributes: ItemAttributes) {
        keep(try check(bytes), of: bytes)
    }

    /// The id and a copy of the attributes of the plaintext `bytes`, which ``check(_:)`` gave `checked` for:
    /// the attributes are kept in the encoding they arrived in.
    static func keep(
        _ checked: (id: ItemID, itemClass: ItemClass, count: Int), of bytes: UnsafeRawBufferPointer
    ) -> (id: ItemID, attributes: ItemAttributes) {
        let encoded = ByteView(copying: UnsafeRawBufferPointer(rebasing: bytes[headerByteCount...]))
        return (checked.id, ItemAttributes(itemClass: checked.itemClass, count: checked.count, encoded: encoded))
    }

    /// What ``decode(_:)`` checks, without copying anything: the plaintext's item id, item class and attribute
    /// count, its attributes being bytes `headerByteCount...` of `bytes` exactly as ``ItemAttributes`` keeps them.
    ///
    /// - Parameter bytes: The decrypted plaintext.
    /// - Throws: ``AttributeDecodingError`` for the first problem found, as ``decode(_:)`` does.
    static func check(
        _ bytes: UnsafeRawBufferPointer
    ) throws(AttributeDecodingError) -> (id: ItemID, itemClass: ItemClass, count: Int) {
        // A valid plaintext passes the quick check (AttributeCoding+QuickCheck.swift); the full one below finds
        // what is wrong with the others.
        if let checked = quickCheck(bytes) { return checked }
        return try fullCheck(bytes)
    }

    /// ``check(_:)`` without the quick pass: every check, with the offset and message of the first that fails.
    static func fullCheck(
        _ bytes: UnsafeRawBufferPointer
    ) throws(AttributeDecodingError) -> (id: ItemID, itemClass: ItemClass, count: Int) {
        let total = bytes.count
        guard total >= 1 else { throw AttributeDecodingError(offset: 0, reason: "truncated: the plaintext is empty") }
        guard bytes[0] == version else {
            throw AttributeDecodingError(offset: 0, reason: "encoding version \(bytes[0]), expected \(version)")
        }
        guard total >= 1 + ItemID.byteCount else {
            throw AttributeDecodingError(offset: 1, reason: "truncated item id: \(total - 1) of 16 bytes")
        }
        let id = ItemID(uncheckedPrefixOf: UnsafeRawBufferPointer(rebasing: bytes[1...]))
        guard total >= 18 else { throw AttributeDecodingError(offset: 17, reason: "truncated: no item class") }
        guard let itemClass = ItemClass(rawValue: bytes[17]) else {
            throw AttributeDecodingError(offset: 17, reason: "unknown item class \(bytes[17])")
        }
        guard total >= headerByteCount else {
            throw AttributeDecodingError(offset: 18, reason: "truncated attribute count: \(total - 18) of 2 bytes")
        }
        let count = Int(loadUInt16(bytes, at: 18))
        guard (minimumCount...ItemAttributes.maximumCount).contains(count) else {
            throw AttributeDecodingError(
                offset: 18, reason: "attribute count \(count) outside \(minimumCount)…\(ItemAttributes.maximumCount)")
        }

        var offset = headerByteCount
        var previousTag: UInt16?
        var hasCreationDate = false
        var hasModificationDate = false
        let creationDateTag = Attribute.creationDate.tag, modificationDateTag = Attribute.modificationDate.tag
        let shapes = AttributeShape.table
        for _ in 0..<count {
            let shape = try decodeAttributeHeader(bytes, at: offset, itemClass: itemClass, afterTag: previousTag, shapes: shapes)
            offset = try checkValue(bytes, of: shape, at: offset)
            if shape.tag == creationDateTag { hasCreationDate = true }
            if shape.tag == modificationDateTag { hasModificationDate = true }
            previousTag = shape.tag
        }
        guard offset == total else {
            throw AttributeDecodingError(
                offset: offset, reason: "\(total - offset) trailing bytes after the last attribute")
        }
        // Two checks rather than a loop over an array of pairs, which would be an allocation per item.
        guard hasCreationDate else { throw AttributeDecodingError(offset: 18, reason: "\(Attribute.creationDate.name) missing") }
        guard hasModificationDate else {
            throw AttributeDecodingError(offset: 18, reason: "\(Attribute.modificationDate.name) missing")
        }
        return (id, itemClass, count)
    }

    /// Reads and checks the tag and type of the attribute at `offset`, which must follow `previousTag`.
    private static func decodeAttributeHeader(
        _ bytes: UnsafeRawBufferPointer, at offset: Int, itemClass: ItemClass, afterTag previousTag: UInt16?,
        shapes: AttributeShape.Table
    ) throws(AttributeDecodingError) -> AttributeShape {
        let remaining = bytes.count - offset
        guard remaining >= attributeHeaderByteCount else {
            throw AttributeDecodingError(
                offset: offset, reason: "truncated attribute header: \(remaining) of \(attributeHeaderByteCount) bytes")
        }
        let tag = loadUInt16(bytes, at: offset)
        if let previousTag, tag <= previousTag {
            throw AttributeDecodingError(
                offset: offset,
                reason: "tag \(hexTag(tag)) after \(hexTag(previousTag)): tags must strictly increase")
        }
        guard let shape = shapes.shape(withTag: tag) else {
            throw AttributeDecodingError(offset: offset, reason: "unknown tag \(hexTag(tag))")
        }
        guard shape.isAllowed(in: itemClass) else {
            throw AttributeDecodingError(
                offset: offset, reason: "\(shape.name) (tag \(hexTag(tag))) not allowed in \(itemClass) items")
        }
        let typeCode = bytes[offset + 2]
        guard typeCode == shape.type.rawValue else {
            throw AttributeDecodingError(
                offset: offset + 2,
                reason: "\(shape.name): type \(typeCode), expected \(shape.type.rawValue) (\(shape.type))")
        }
        return shape
    }

    /// Checks the length and value of the attribute at `offset`, whose header has been checked; returns the
    /// offset just after the value.
    private static func checkValue(
        _ bytes: UnsafeRawBufferPointer, of attribute: AttributeShape, at offset: Int
    ) throws(AttributeDecodingError) -> Int {
        let lengthOffset = offset + 3
        let valueOffset = offset + attributeHeaderByteCount
        let rawLength = loadUInt32(bytes, at: lengthOffset)
        switch attribute.type {
        case .string, .bytes:
            guard rawLength <= ItemAttributes.maximumValueByteCount else {
                throw AttributeDecodingError(
                    offset: lengthOffset,
                    reason: "\(attribute.name): length \(rawLength), more than \(ItemAttributes.maximumValueByteCount)")
            }
        case .integer, .date, .boolean:
            let expected: UInt32 = attribute.type == .boolean ? 1 : 8
            guard rawLength == expected else {
                throw AttributeDecodingError(
                    offset: lengthOffset, reason: "\(attribute.name): length \(rawLength), expected \(expected)")
            }
        }
        // At most 65,535 here, so the conversion cannot fail; `exactly` keeps it free of a trap regardless.
        guard let length = Int(exactly: rawLength), length <= bytes.count - valueOffset else {
            throw AttributeDecodingError(
                offset: lengthOffset,
                reason: "\(attribute.name): truncated value: length \(rawLength), "
                    + "\(bytes.count - valueOffset) bytes remain")
        }
        let end = valueOffset + length
        let raw = UnsafeRawBufferPointer(rebasing: bytes[valueOffset..<end])
        switch attribute.type {
        case .string:
            guard isValidUTF8(raw) else {
                throw AttributeDecodingError(offset: valueOffset, reason: "\(attribute.name): invalid UTF-8")
            }
            return end
        case .bytes:
            return end
        case .boolean:
            guard raw[0] <= 1 else {
                throw AttributeDecodingError(
                    offset: valueOffset, reason: "\(attribute.name): boolean \(raw[0]), expected 0 or 1")
            }
            return end
        case .integer:
            let number = Int64(bitPattern: loadUInt64(bytes, at: valueOffset))
            if let range = attribute.integerRange, !range.contains(number) {
                throw AttributeDecodingError(
                    offset: valueOffset,
                    reason: "\(attribute.name): \(number) is outside \(range.lowerBound)…\(range.upperBound)")
            }
            return end
        case .date:
            return end
        }
    }

    // The loads below are only called where the caller has checked that the bytes are present.

    private static func loadUInt16(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt16 {
        UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    private static func loadUInt32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    private static func loadUInt64(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    private static func hexTag(_ tag: UInt16) -> String {
        let digits = String(tag, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// Whether `raw` is valid UTF-8. ASCII (the usual account, service and label) takes a fast path: every byte
/// below 0x80 is valid UTF-8 on its own.
func isValidUTF8(_ raw: UnsafeRawBufferPointer) -> Bool {
    var combined: UInt8 = 0
    for byte in raw { combined |= byte }
    if combined < 0x80 { return true }
    return String(validating: raw, as: UTF8.self) != nil
}
