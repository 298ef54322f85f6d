import Foundation

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

    /// One attribute of the item: its tag and value.
    struct Entry: Hashable, Sendable {
        // The value first: an enum of 17 bytes then a 2-byte tag packs into 24 bytes; the other order needs
        // 32 (an item keeps about a dozen entries).
        let value: StoredAttributeValue
        let tag: UInt16

        init(tag: UInt16, value: StoredAttributeValue) {
            self.value = value
            self.tag = tag
        }
    }

    /// The class of the item these attributes describe.
    public let itemClass: ItemClass
    /// Entries in strictly increasing tag order, each valid for `itemClass`.
    private(set) var entries: [Entry]

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
        var entries: [Entry] = []
        entries.reserveCapacity(values.count)
        for (attribute, value) in values.sorted(by: { $0.attribute.tag < $1.attribute.tag }) {
            entries.append(Entry(tag: attribute.tag, value: try Self.validated(value, for: attribute, in: itemClass)))
        }
        self.init(itemClass: itemClass, validatedEntries: entries)
    }

    /// Wraps entries that are already known to be valid, unique and in increasing tag order (the decoder
    /// and the defaults check them as they build them).
    init(itemClass: ItemClass, validatedEntries: [Entry]) {
        self.itemClass = itemClass
        self.entries = validatedEntries
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
    public var count: Int { entries.count }

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
        var copy = self
        let index = copy.entries.partitioningIndex { $0.tag >= attribute.tag }
        let present = index < copy.entries.count && copy.entries[index].tag == attribute.tag
        guard let value else {
            if present { copy.entries.remove(at: index) }
            return copy
        }
        let stored = try Self.validated(value, for: attribute, in: itemClass)
        if present {
            copy.entries[index] = Entry(tag: attribute.tag, value: stored)
        } else {
            guard copy.entries.count < Self.maximumCount else {
                throw .invalidParameter("\(attribute.name): the item already has \(Self.maximumCount) attributes")
            }
            copy.entries.insert(Entry(tag: attribute.tag, value: stored), at: index)
        }
        return copy
    }

    /// These attributes with creationDate and modificationDate set, built in one exactly sized copy (two
    /// ``setting(_:to:)`` calls would copy twice and leave the entries array with spare capacity, which a bulk
    /// load keeps for every item).
    func settingDates(created: Date, modified: Date) throws(KeychainError) -> ItemAttributes {
        let dates = [
            Entry(tag: Attribute.creationDate.tag, value: try Self.validated(.date(created), for: .creationDate, in: itemClass)),
            Entry(tag: Attribute.modificationDate.tag, value: try Self.validated(.date(modified), for: .modificationDate, in: itemClass)),
        ]
        // The two date tags are adjacent (5 and 6): they go in together, before the first larger tag.
        var merged: [Entry] = []
        merged.reserveCapacity(entries.count + 2)
        var placed = false
        for entry in entries where entry.tag != dates[0].tag && entry.tag != dates[1].tag {
            if !placed && entry.tag > dates[1].tag {
                merged.append(contentsOf: dates)
                placed = true
            }
            merged.append(entry)
        }
        if !placed { merged.append(contentsOf: dates) }
        return ItemAttributes(itemClass: itemClass, validatedEntries: merged)
    }

    /// The stored value with `tag`, found by binary search.
    func stored(_ tag: UInt16) -> StoredAttributeValue? {
        let index = entries.partitioningIndex { $0.tag >= tag }
        guard index < entries.count, entries[index].tag == tag else { return nil }
        return entries[index].value
    }

    /// Iterates the attributes in increasing tag order.
    public struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[Entry]>

        /// Returns the next attribute and its value, or `nil` after the last.
        public mutating func next() -> (attribute: Attribute, value: AttributeValue)? {
            while let entry = base.next() {
                // Every stored tag comes from the catalogue; the check only keeps this free of `!`.
                if let attribute = Attribute.withTag(entry.tag) { return (attribute, entry.value.publicValue) }
            }
            return nil
        }
    }

    /// Returns an iterator over the attributes in increasing tag order.
    public func makeIterator() -> Iterator {
        Iterator(base: entries.makeIterator())
    }
}

extension Array {
    /// The index of the first element for which `belongsToSecondPart` is true, in a collection where all
    /// those elements come after all the others (binary search).
    fileprivate func partitioningIndex(where belongsToSecondPart: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = low + (high - low) / 2
            if belongsToSecondPart(self[middle]) {
                high = middle
            } else {
                low = middle + 1
            }
        }
        return low
    }
}
