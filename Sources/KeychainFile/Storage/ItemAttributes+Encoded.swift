// Reading and rebuilding the encoded attributes an ItemAttributes keeps (`u16 tag ‖ u8 type ‖ u32 length ‖
// value`, big-endian, SPEC.md §7.3). The bytes were checked when they were made (by the decoder, or encoded
// here from validated values), so the walks below trust the structure; they still check every length against
// the buffer before reading, so that no value can make them read out of bounds.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ItemAttributes {
    /// Where one attribute sits in ``encoded``.
    struct EncodedEntry {
        let tag: UInt16
        let type: UInt8
        /// The offset of the attribute's tag.
        let start: Int
        /// The value's bytes.
        let value: Range<Int>
    }

    /// The attribute whose tag starts at `offset`, or `nil` at the end.
    func entry(at offset: Int) -> EncodedEntry? {
        encoded.withUnsafeBytes { raw in Self.entry(in: raw, at: offset) }
    }

    /// The attribute with `tag`, found by walking the attributes in tag order.
    func entry(_ tag: UInt16) -> EncodedEntry? {
        encoded.withUnsafeBytes { raw in
            var offset = 0
            while let entry = Self.entry(in: raw, at: offset) {
                if entry.tag == tag { return entry }
                if entry.tag > tag { return nil }
                offset = entry.value.upperBound
            }
            return nil
        }
    }

    /// The attribute whose tag starts at `offset` in `raw`, or `nil` at the end (or where a length would
    /// overrun `raw`).
    static func entry(in raw: UnsafeRawBufferPointer, at offset: Int) -> EncodedEntry? {
        let header = AttributeCoding.attributeHeaderByteCount
        guard offset >= 0, raw.count - offset >= header else { return nil }
        let tag = UInt16(raw[offset]) << 8 | UInt16(raw[offset + 1])
        let length = Int(UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: offset + 3, as: UInt32.self)))
        let valueStart = offset + header
        guard length <= raw.count - valueStart else { return nil }
        return EncodedEntry(tag: tag, type: raw[offset + 2], start: offset, value: valueStart..<(valueStart + length))
    }

    /// The value of an attribute of these attributes, decoded.
    func value(of entry: EncodedEntry) -> StoredAttributeValue {
        encoded.withUnsafeBytes { raw in
            let bytes = UnsafeRawBufferPointer(rebasing: raw[entry.value])
            switch AttributeType(rawValue: entry.type) {
            case .string?:
                // Checked to be UTF-8 when it was stored.
                return .string(String(decoding: bytes, as: UTF8.self))
            case .bytes?:
                return .bytes(Array(bytes))
            case .boolean?:
                return .boolean(bytes.first == 1)
            case .integer?:
                return .integer(bytes.count == 8 ? Int64(bitPattern: Self.loadBigEndian(bytes)) : 0)
            case .date?, nil:
                return .date(milliseconds: bytes.count == 8 ? Int64(bitPattern: Self.loadBigEndian(bytes)) : 0)
            }
        }
    }

    /// The stored value with `tag`, or `nil` when the item does not have it.
    func stored(_ tag: UInt16) -> StoredAttributeValue? {
        entry(tag).map(value(of:))
    }

    /// Whether the attribute with `tag` has the value `wanted`, comparing encoded bytes (no value is decoded);
    /// `nil` when the item does not have the attribute.
    func value(_ tag: UInt16, equals wanted: StoredAttributeValue) -> Bool? {
        guard let entry = entry(tag) else { return nil }
        guard entry.type == wanted.type.rawValue else { return false }
        return encoded.withUnsafeBytes { raw in
            let actual = UnsafeRawBufferPointer(rebasing: raw[entry.value])
            return wanted.withEncodedValue { wantedBytes in actual.elementsEqualBytes(wantedBytes) }
        }
    }

    /// Feeds the attribute with `tag` as the file encodes it (`tag ‖ type ‖ length ‖ value`) to `hasher`, in one
    /// call: the stored bytes, or `fallback` (an encoding made by ``AttributeCoding/writeAttribute(tag:value:into:)``)
    /// when the item does not have it. ``StoredAttributeValue/combineEncoded(tag:into:)`` feeds the same bytes for
    /// the same value.
    func combineAttribute(_ tag: UInt16, orElse fallback: [UInt8], into hasher: inout Hasher) {
        guard let entry = entry(tag) else {
            fallback.withUnsafeBytes { hasher.combine(bytes: $0) }
            return
        }
        encoded.withUnsafeBytes { raw in hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: raw[entry.start..<entry.value.upperBound])) }
    }

    /// Appends the attribute with `tag` as the file encodes it (`tag ‖ type ‖ length ‖ value`), or `fallback`
    /// under `tag` when the item does not have it.
    func appendEncoded(_ tag: UInt16, orElse fallback: StoredAttributeValue, to out: inout [UInt8]) {
        guard let entry = entry(tag) else {
            AttributeCoding.appendAttribute(tag: tag, value: fallback, to: &out)
            return
        }
        encoded.withUnsafeBytes { raw in out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[entry.start..<entry.value.upperBound])) }
    }

    /// A copy with each attribute of `changes` set to its value, or removed for `nil`; the other attributes
    /// are copied as they are. `changes` has distinct tags in increasing order, and its values are valid for
    /// the class; the caller keeps the count within ``maximumCount``.
    func replacing(_ changes: [(tag: UInt16, value: StoredAttributeValue?)]) -> ItemAttributes {
        var size = encoded.count
        for (_, value) in changes {
            if let value { size += AttributeCoding.attributeHeaderByteCount + AttributeCoding.valueByteCount(value) }
        }
        var out: [UInt8] = []
        out.reserveCapacity(size)
        var count = 0
        var pending = changes[...]
        func emitChanges(before tag: UInt16?) {
            while let change = pending.first, tag.map({ change.tag <= $0 }) ?? true {
                if let value = change.value {
                    AttributeCoding.appendAttribute(tag: change.tag, value: value, to: &out)
                    count += 1
                }
                pending = pending.dropFirst()
            }
        }
        var offset = 0
        while let entry = entry(at: offset) {
            let replaced = changes.contains { $0.tag == entry.tag }
            emitChanges(before: entry.tag)
            if !replaced {
                encoded.withUnsafeBytes { raw in out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[entry.start..<entry.value.upperBound])) }
                count += 1
            }
            offset = entry.value.upperBound
        }
        emitChanges(before: nil)
        return ItemAttributes(itemClass: itemClass, count: count, encoded: out)
    }

    /// The attributes of a batch's new item, in the item's one heap block: these attributes, which have
    /// neither creationDate nor modificationDate, with the two dates written into their places in the same
    /// pass that copies the rest, then `secret` reserved to be sealed in place (see
    /// ``ItemBytes/makeReserved(attributes:secret:)``). The returned attributes view that block.
    func reservingWithDates(created: Int64, modified: Int64, secret: [UInt8]) -> ItemAttributes {
        let dateByteCount = AttributeCoding.attributeHeaderByteCount + 8
        let block = ItemBytes.makeReserved(attributesByteCount: encoded.count + 2 * dateByteCount, secret: secret) { out in
            encoded.withUnsafeBytes { raw in
                var source = 0
                var target = 0
                func insert(_ tag: UInt16, _ milliseconds: Int64) {
                    var offset = source
                    while let entry = Self.entry(in: raw, at: offset), entry.tag < tag { offset = entry.value.upperBound }
                    precondition(Self.entry(in: raw, at: offset)?.tag != tag, "the date is not set already")
                    let part = UnsafeRawBufferPointer(rebasing: raw[source..<offset])
                    UnsafeMutableRawBufferPointer(rebasing: out[target..<(target + part.count)]).copyMemory(from: part)
                    target += part.count
                    source = offset
                    target += AttributeCoding.writeAttribute(
                        tag: tag, value: .date(milliseconds: milliseconds), into: UnsafeMutableRawBufferPointer(rebasing: out[target...]))
                }
                insert(Attribute.creationDate.tag, created)
                insert(Attribute.modificationDate.tag, modified)
                precondition(out.count - target == raw.count - source, "every byte written")
                UnsafeMutableRawBufferPointer(rebasing: out[target...]).copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[source...]))
            }
        }
        return ItemAttributes(itemClass: itemClass, count: count + 2, encoded: block.attributesView)
    }

    private static func loadBigEndian(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
    }
}

extension StoredAttributeValue {
    /// Calls `body` with the value's bytes as the file encodes them (after the length): UTF-8 for strings,
    /// 8 big-endian bytes for integers and dates, one byte for booleans.
    func withEncodedValue<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        switch self {
        case .string(let text):
            if let result = text.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
                return result
            }
            return Array(text.utf8).withUnsafeBytes(body)
        case .bytes(let bytes):
            return bytes.withUnsafeBytes(body)
        case .integer(let number):
            return withUnsafeBytes(of: UInt64(bitPattern: number).bigEndian, body)
        case .date(let milliseconds):
            return withUnsafeBytes(of: UInt64(bitPattern: milliseconds).bigEndian, body)
        case .boolean(let flag):
            return withUnsafeBytes(of: flag ? UInt8(1) : 0, body)
        }
    }

    /// Feeds the attribute `tag` with this value, as the file encodes it (`tag ‖ type ‖ length ‖ value`), to
    /// `hasher`: the same input as ``ItemAttributes/combineAttribute(_:orElse:into:)`` gives for an attribute
    /// stored with this value.
    func combineEncoded(tag: UInt16, into hasher: inout Hasher) {
        let count = AttributeCoding.attributeHeaderByteCount + AttributeCoding.valueByteCount(self)
        withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { out in
            let written = AttributeCoding.writeAttribute(tag: tag, value: self, into: out)
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: out[..<written]))
        }
    }
}

extension UnsafeRawBufferPointer {
    /// Whether both buffers hold the same bytes (one memcmp).
    func elementsEqualBytes(_ other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        guard count > 0, let left = baseAddress, let right = other.baseAddress else { return true }
        return memcmp(left, right, count) == 0
    }
}

extension ItemAttributes {
    /// Reads attributes asked for in increasing tag order with one pass over the encoding, instead of one
    /// walk from the start per attribute (what the typed items' initialisers do for a dozen attributes). An
    /// attribute asked for out of order, or twice, is still found: the reader starts again from the first.
    struct ForwardReader {
        let attributes: ItemAttributes
        private var offset = 0
        private var lastTag: UInt16 = 0

        init(_ attributes: ItemAttributes) { self.attributes = attributes }

        mutating func stored(_ attribute: Attribute) -> StoredAttributeValue? {
            let tag = attribute.tag
            // The same tag again starts over too: the reader has moved past it.
            if tag <= lastTag { offset = 0 }
            lastTag = tag
            while let entry = attributes.entry(at: offset) {
                if entry.tag > tag { return nil }
                offset = entry.value.upperBound
                if entry.tag == tag { return attributes.value(of: entry) }
            }
            return nil
        }

        mutating func string(_ attribute: Attribute) -> String? {
            if case .string(let text)? = stored(attribute) { return text }
            return nil
        }

        mutating func bytes(_ attribute: Attribute) -> [UInt8]? {
            if case .bytes(let bytes)? = stored(attribute) { return bytes }
            return nil
        }

        mutating func integer(_ attribute: Attribute) -> Int64? {
            if case .integer(let number)? = stored(attribute) { return number }
            return nil
        }

        mutating func code(_ attribute: Attribute) -> UInt32? {
            integer(attribute).flatMap { UInt32(exactly: $0) }
        }

        mutating func boolean(_ attribute: Attribute) -> Bool? {
            if case .boolean(let flag)? = stored(attribute) { return flag }
            return nil
        }

        mutating func date(_ attribute: Attribute) -> Date? {
            if case .date(let milliseconds)? = stored(attribute) { return AttributeValue.date(fromMilliseconds: milliseconds) }
            return nil
        }

        mutating func accessibility() -> Accessibility {
            integer(.accessible).flatMap(Accessibility.init(rawValue:)) ?? .whenUnlocked
        }

        /// The attributes every class has (tags 1 … 6), with the typed items' defaults.
        @inline(__always)
        mutating func common() -> CommonFields {
            CommonFields(
                accessGroup: string(.accessGroup) ?? "", accessible: accessibility(),
                synchronizable: boolean(.synchronizable) ?? false, label: string(.label),
                creationDate: date(.creationDate), modificationDate: date(.modificationDate))
        }

        /// The attributes both password classes have after account (tags 0x0104 … 0x0109).
        @inline(__always)
        mutating func passwordCommon() -> PasswordFields {
            PasswordFields(
                itemDescription: string(.itemDescription), comment: string(.comment), creator: code(.creator),
                itemType: code(.itemType), isInvisible: boolean(.isInvisible), isNegative: boolean(.isNegative))
        }
    }

    /// What ``ForwardReader/common()`` reads.
    struct CommonFields {
        let accessGroup: String
        let accessible: Accessibility
        let synchronizable: Bool
        let label: String?
        let creationDate: Date?
        let modificationDate: Date?
    }

    /// What ``ForwardReader/passwordCommon()`` reads.
    struct PasswordFields {
        let itemDescription: String?
        let comment: String?
        let creator: UInt32?
        let itemType: UInt32?
        let isInvisible: Bool?
        let isNegative: Bool?
    }
}
