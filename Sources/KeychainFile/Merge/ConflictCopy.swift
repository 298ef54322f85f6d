import KeychainCrypto

/// The conflict copy a merge keeps of a version that lost (SPEC.md §43.4): the version as it was, under an id
/// derived from the item's id and the version's digest, with a marker appended to one primary-key attribute so
/// that it never collides with the item it is a copy of.
///
/// The marker is ` (conflict ` + the original item id in hexadecimal + ` ` + the first 8 hexadecimal digits of the
/// copy's id + `)`, appended to the account of a password, the application tag of a key, or the serial number of
/// a certificate (as UTF-8 bytes for the last two). A copy whose marker, taken off, gives back a version whose
/// derived id is the copy's own id is an *untouched* copy: nobody changed it since the merge made it.
enum ConflictCopy {
    /// The id of the conflict copy of the version with digest `digest` of item `origin`: the first 16 bytes of
    /// `SHA-256("KeychainFile conflict copy" ‖ origin ‖ digest)`.
    static func id(origin: ItemID, digest: [UInt8]) -> ItemID {
        var hash = SHA256()
        Array("KeychainFile conflict copy".utf8).withUnsafeBytes { hash.update(bufferPointer: $0) }
        origin.withUnsafeBytes { hash.update(bufferPointer: $0) }
        digest.withUnsafeBytes { hash.update(bufferPointer: $0) }
        let bytes = Array(hash.finalize())
        return try! ItemID(bytes: bytes[0..<ItemID.byteCount])
    }

    /// The attribute that carries the marker in items of `itemClass`.
    static func markedAttribute(of itemClass: ItemClass) -> Attribute {
        switch itemClass {
        case .genericPassword, .internetPassword: return .account
        case .certificate: return .serialNumber
        case .key: return .applicationTag
        }
    }

    /// The marker appended to the copy with id `copy` of item `origin`.
    static func marker(origin: ItemID, copy: ItemID) -> String {
        " (conflict \(origin) \(String(copy.description.prefix(8))))"
    }

    /// The conflict copy of `version`.
    ///
    /// - Throws: `KeychainError.limitReached` when the marked attribute would be longer than an attribute may be.
    static func make(of version: MergeVersion) throws(KeychainError) -> MergeVersion {
        let copyID = id(origin: version.id, digest: version.digest)
        let attribute = markedAttribute(of: version.attributes.itemClass)
        let marker = marker(origin: version.id, copy: copyID)
        let marked: AttributeValue
        switch version.attributes[attribute] {
        case .string(let text)?: marked = .string(text + marker)
        case .bytes(let bytes)?: marked = .bytes(bytes + Array(marker.utf8))
        case nil where attribute == .account: marked = .string(marker)
        case nil: marked = .bytes(Array(marker.utf8))
        default: throw .invalidParameter("internal error: \(attribute) holds a value of another type")
        }
        if case .string(let text) = marked, text.utf8.count > ItemAttributes.maximumValueByteCount {
            throw .limitReached("the conflict copy of item \(version.id) would have an account over 65,535 bytes")
        }
        if case .bytes(let bytes) = marked, bytes.count > ItemAttributes.maximumValueByteCount {
            throw .limitReached("the conflict copy of item \(version.id) would have a \(attribute) over 65,535 bytes")
        }
        let attributes = try version.attributes.setting(attribute, to: marked)
        return MergeVersion(id: copyID, attributes: attributes, secret: version.secret)
    }

    /// The item an untouched conflict copy is a copy of, and the version it keeps; nil for any other version. A copy is
    /// untouched when it is exactly what ``make(of:)`` makes of the version its marker gives back.
    static func original(of copy: MergeVersion) -> (origin: ItemID, version: MergeVersion)? {
        guard let (origin, attributes) = unmarked(copy.attributes, id: copy.id) else { return nil }
        let version = MergeVersion(id: origin, attributes: attributes, secret: copy.secret)
        guard id(origin: origin, digest: version.digest) == copy.id, (try? make(of: version))?.digest == copy.digest else { return nil }
        return (origin, version)
    }

    /// The item id the marker of the conflict copy with id `id` names, and the copy's attributes with the marker taken
    /// off; nil when `attributes` carry no marker, or one whose 8 digits are not the start of `id`. Says nothing of
    /// whether the copy was changed since it was made.
    static func unmarked(_ attributes: ItemAttributes, id copyID: ItemID) -> (origin: ItemID, attributes: ItemAttributes)? {
        let attribute = markedAttribute(of: attributes.itemClass)
        guard let (origin, stored, copyDigits) = marker(in: attributes),
              copyDigits.elementsEqual(copyID.description.utf8.prefix(8)) else { return nil }
        let kept = Array(stored[..<(stored.count - markerLength)])
        let restored: AttributeValue
        if case .string = attributes[attribute] {
            guard let text = String(validating: kept, as: UTF8.self) else { return nil }
            restored = .string(text)
        } else {
            restored = .bytes(kept)
        }
        guard let unmarked = try? attributes.setting(attribute, to: restored) else { return nil }
        return (origin, unmarked)
    }

    /// The item id a marker on `attributes` names, whatever the copy's 8 digits: a quick test that most items fail.
    static func markedOrigin(_ attributes: ItemAttributes) -> ItemID? {
        marker(in: attributes)?.origin
    }

    /// The length of a marker: " (conflict ", 32 digits, a space, 8 digits, ")".
    private static let markerLength = 11 + 32 + 1 + 8 + 1

    /// The marked attribute's bytes when they end with a marker, the id the marker names, and its 8 copy digits.
    private static func marker(in attributes: ItemAttributes) -> (origin: ItemID, stored: [UInt8], copyDigits: ArraySlice<UInt8>)? {
        let prefix = Array(" (conflict ".utf8)
        let stored: [UInt8]
        switch attributes[markedAttribute(of: attributes.itemClass)] {
        case .string(let text)?: stored = Array(text.utf8)
        case .bytes(let bytes)?: stored = bytes
        default: return nil
        }
        guard stored.count >= markerLength, stored.last == UInt8(ascii: ")") else { return nil }
        let tail = Array(stored[(stored.count - markerLength)...])
        guard tail.starts(with: prefix), tail[prefix.count + 32] == UInt8(ascii: " "),
              let origin = itemID(hexadecimal: Array(tail[prefix.count..<(prefix.count + 32)])) else { return nil }
        return (origin, stored, tail[(prefix.count + 33)..<(prefix.count + 41)])
    }

    /// The id 32 lowercase hexadecimal digits spell, as a marker writes it; nil for anything else.
    private static func itemID(hexadecimal digits: [UInt8]) -> ItemID? {
        guard digits.allSatisfy({ nibble($0) != nil }), let text = String(validating: digits, as: UTF8.self) else { return nil }
        return try? ItemID(hexadecimal: text)
    }

    /// The value of a lowercase hexadecimal digit.
    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}
