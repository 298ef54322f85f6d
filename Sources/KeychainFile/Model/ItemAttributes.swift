#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The validated attributes of one keychain item: every attribute allowed in the item's class, of the
/// right type, within the limits of SPEC.md §7.3 and §8.2.
///
/// Build one from a dictionary, read it with a subscript, change it with ``setting(_:to:)``, and iterate
/// it in increasing tag order (the order of the file):
///
/// ```swift
/// let attributes = try ItemAttributes(itemClass: .genericPassword, values: [
///     .service: .string("mail"),
///     .account: .string("ann"),
/// ])
/// let labelled = try attributes.setting(.label, to: .string("Mail for Ann"))
/// for (attribute, value) in labelled.withDefaults() {
///     print(attribute.name, value)  // accessGroup "", accessible 1, synchronizable false, label …
/// }
/// ```
///
/// Two values are equal when they have the same class and the same attributes with the same values
/// (strings byte for byte, dates to the millisecond).
public struct ItemAttributes: Hashable, Sendable, Sequence {
    /// The most attributes one item may carry (SPEC.md §11).
    public static let maximumCount = 64
    /// The most bytes a string (in UTF-8) or bytes value may have (SPEC.md §7.3).
    public static let maximumValueByteCount = 65_535

    /// The class of the item these attributes describe.
    public let itemClass: ItemClass
    /// The number of attributes (at most 64).
    private let storedCount: UInt8
    /// The attributes exactly as the file encodes them after an attributes box's header (SPEC.md §7.3):
    /// `count × (u16 tag ‖ u8 type ‖ u32 length ‖ value)`, big-endian, in strictly increasing tag order, each
    /// valid for `itemClass`. One buffer per item instead of an array of values and a heap string per string
    /// value: a keychain keeps every item's attributes in memory, and encoding or decoding a record copies
    /// these bytes whole. Values are read from it on demand (ItemAttributes+Encoded.swift). A view: the
    /// attributes of a live item sit in the same heap block as its sealed secret (``ItemBytes``).
    let encoded: ByteView

    /// Creates the attributes of an item of `itemClass`, checking every value.
    ///
    /// For example:
    /// ```swift
    /// let attributes = try ItemAttributes(itemClass: .internetPassword, values: [
    ///     .server: .string("example.com"), .port: .integer(443), .protocolType: .integer(0x6874_7073),
    /// ])
    /// ```
    ///
    /// - Parameters:
    ///   - itemClass: The class of the item.
    ///   - values: The attributes and their values; attributes not in the dictionary are absent.
    /// - Throws: `KeychainError.invalidParameter`, naming the attribute, when an attribute is not allowed in
    ///   `itemClass`, a value has the wrong type, a string (in UTF-8) or bytes value is longer than 65,535
    ///   bytes, an integer is outside the range SPEC.md §8.2 gives for it, or a date is too far from 1970
    ///   for 64-bit milliseconds; and when there are more than 64 attributes.
    public init(itemClass: ItemClass, values: [Attribute: AttributeValue] = [:]) throws(KeychainError) {
        try self.init(itemClass: itemClass, distinctValues: values.map { ($0.key, $0.value) })
    }

    /// ``init(itemClass:values:)`` for attribute–value pairs whose attributes are distinct.
    init(itemClass: ItemClass, distinctValues values: [(attribute: Attribute, value: AttributeValue)]) throws(KeychainError) {
        guard values.count <= Self.maximumCount else {
            throw .invalidParameter("\(values.count) attributes, more than \(Self.maximumCount)")
        }
        var validated: [(tag: UInt16, value: StoredAttributeValue)] = []
        validated.reserveCapacity(values.count)
        for (attribute, value) in values.sorted(by: { $0.attribute.tag < $1.attribute.tag }) {
            validated.append((attribute.tag, try Self.validated(value, for: attribute, in: itemClass)))
        }
        self.init(itemClass: itemClass, sortedValues: validated)
    }

    /// Encodes values that are already valid for `itemClass`, with distinct tags in increasing order.
    /// The bytes are written once, straight into the object that keeps them.
    init(itemClass: ItemClass, sortedValues values: [(tag: UInt16, value: StoredAttributeValue)]) {
        var size = 0
        for (_, value) in values { size += AttributeCoding.attributeHeaderByteCount + AttributeCoding.valueByteCount(value) }
        let storage = ItemBytes.make(attributesByteCount: size, hasChain: false, boxByteCount: 0) { out in
            var offset = 0
            for (tag, value) in values {
                offset += AttributeCoding.writeAttribute(tag: tag, value: value, into: UnsafeMutableRawBufferPointer(rebasing: out[offset...]))
            }
            precondition(offset == size, "every byte written")
        }
        self.init(itemClass: itemClass, count: values.count, encoded: ByteView(storage, offset: 0, count: size))
    }

    /// Wraps `count` attributes already encoded as ``encoded`` holds them and known to be valid, unique and in
    /// increasing tag order (the decoder and the builders here check them as they make them).
    init(itemClass: ItemClass, count: Int, encoded: [UInt8]) {
        self.init(itemClass: itemClass, count: count, encoded: ByteView(copying: encoded))
    }

    /// ``init(itemClass:count:encoded:)`` for bytes already in a view (no copy is made).
    init(itemClass: ItemClass, count: Int, encoded: ByteView) {
        assert(count <= Self.maximumCount)
        self.itemClass = itemClass
        self.storedCount = UInt8(truncatingIfNeeded: count)
        self.encoded = encoded
    }

    /// The value of `attribute`, or `nil` when the item does not have it.
    ///
    /// For example:
    /// ```swift
    /// if case .string(let service)? = attributes[.service] { print(service) }
    /// ```
    public subscript(attribute: Attribute) -> AttributeValue? {
        stored(attribute.tag)?.publicValue
    }

    /// The number of attributes present.
    public var count: Int { Int(storedCount) }

    /// The attributes as a dictionary.
    public var values: [Attribute: AttributeValue] {
        Dictionary(uniqueKeysWithValues: self.map { ($0.attribute, $0.value) })
    }

    /// Returns a copy with `attribute` set to `value`, or removed when `value` is `nil`.
    ///
    /// For example:
    /// ```swift
    /// let relabelled = try attributes.setting(.label, to: .string("Work mail"))
    /// let unlabelled = try relabelled.setting(.label, to: nil)
    /// ```
    ///
    /// - Parameters:
    ///   - attribute: The attribute to set or remove.
    ///   - value: The new value, or `nil` to remove the attribute.
    /// - Returns: The changed attributes.
    /// - Throws: `KeychainError.invalidParameter` for the same reasons as ``init(itemClass:values:)``.
    public func setting(_ attribute: Attribute, to value: AttributeValue?) throws(KeychainError) -> ItemAttributes {
        guard let value else {
            return entry(attribute.tag) == nil ? self : replacing([(attribute.tag, nil)])
        }
        let stored = try Self.validated(value, for: attribute, in: itemClass)
        if entry(attribute.tag) == nil {
            guard count < Self.maximumCount else {
                throw .invalidParameter("\(attribute.name): the item already has \(Self.maximumCount) attributes")
            }
        }
        return replacing([(attribute.tag, stored)])
    }

    /// Iterates the attributes in increasing tag order.
    public struct Iterator: IteratorProtocol {
        let attributes: ItemAttributes
        var offset = 0

        /// Returns the next attribute and its value, or `nil` after the last.
        public mutating func next() -> (attribute: Attribute, value: AttributeValue)? {
            while let entry = attributes.entry(at: offset) {
                offset = entry.value.upperBound
                // Every stored tag comes from the catalogue; the check only keeps this free of `!`.
                if let attribute = Attribute.withTag(entry.tag) {
                    return (attribute, attributes.value(of: entry).publicValue)
                }
            }
            return nil
        }
    }

    /// Returns an iterator over the attributes in increasing tag order.
    public func makeIterator() -> Iterator {
        Iterator(attributes: self)
    }

    public static func == (lhs: ItemAttributes, rhs: ItemAttributes) -> Bool {
        // The encoding is canonical (tags in order, strings as their UTF-8, dates in milliseconds), so equal
        // attributes have equal bytes.
        lhs.itemClass == rhs.itemClass && lhs.encoded == rhs.encoded
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(itemClass)
        encoded.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
