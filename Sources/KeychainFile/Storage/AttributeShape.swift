/// What checking an encoded attribute needs to know of its kind: the tag, type, classes and integer range of
/// an ``Attribute``, without its name.
///
/// Decoding looks one up for every attribute of every item it reads (eleven an item in the benchmark's
/// keychain, a million at each open of 100,000 items). An ``Attribute`` found in a dictionary cost a hash
/// of the tag, a probe and a copy that retains its name; a shape is a trivial value read from a flat
/// table indexed by the tag's two bytes. The name, needed only for an error message, is looked up from
/// ``catalogueIndex`` when one is made.
struct AttributeShape: Sendable {
    let tag: UInt16
    let type: AttributeType
    /// The classes whose items may carry the attribute, one bit per class code (as ``Attribute``'s).
    let classMask: UInt8
    /// For integer attributes, the values SPEC.md §8.2 allows; `nil` when any `Int64` is allowed.
    let integerRange: ClosedRange<Int64>?
    /// The attribute's position in ``Attribute/all``.
    let catalogueIndex: Int

    /// The attribute this is the shape of.
    var attribute: Attribute { Attribute.all[catalogueIndex] }

    /// The attribute's name, for error messages.
    var name: String { attribute.name }

    /// Returns whether items of `itemClass` may carry the attribute.
    @inline(__always)
    func isAllowed(in itemClass: ItemClass) -> Bool {
        classMask & Attribute.bit(for: itemClass) != 0
    }

    /// Returns the shape of the attribute with the given tag, or `nil` for a tag SPEC.md §8.2 does not define.
    @inline(__always)
    static func withTag(_ tag: UInt16) -> AttributeShape? {
        table.shape(withTag: tag)
    }

    /// Every shape, by tag: what ``withTag(_:)`` reads. A decoder takes it once per item rather than once per
    /// attribute (each access to a global checks that it was initialised).
    static let table = Table()

    /// The shapes in a flat array indexed by the tag's two bytes.
    struct Table: Sendable {
        /// Tags are `group << 8 | member`; SPEC.md §8.2 numbers the members of each group from 1, below 16.
        private static let membersPerGroup = 16
        private let groupCount: Int
        /// Every shape at `group · 16 + member`, `nil` where no attribute has that tag.
        private let shapes: [AttributeShape?]
        /// The same, packed in 16 bits for ``AttributeCoding/quickCheck(_:)``: 0 where no attribute has the tag;
        /// otherwise bit 0 set, bits 1 … 3 the type code, bits 4 … 7 the class mask, and bits 8 … 15 one more than
        /// the index of the tag's integer range in ``integerRanges`` (0 when any value is allowed).
        let compact: [UInt16]
        /// The integer ranges ``compact`` refers to.
        let integerRanges: [ClosedRange<Int64>]

        fileprivate init() {
            groupCount = Int(Attribute.all.map(\.tag).max()! >> 8) + 1
            var shapes = [AttributeShape?](repeating: nil, count: groupCount * Self.membersPerGroup)
            var compact = [UInt16](repeating: 0, count: groupCount * Self.membersPerGroup)
            var ranges: [ClosedRange<Int64>] = []
            for (index, attribute) in Attribute.all.enumerated() {
                let member = Int(attribute.tag & 0xFF)
                precondition(member < Self.membersPerGroup, "attribute tag \(attribute.tag) outside the shape table")
                let slot = Int(attribute.tag >> 8) * Self.membersPerGroup + member
                shapes[slot] = AttributeShape(
                    tag: attribute.tag, type: attribute.type, classMask: attribute.classMask,
                    integerRange: attribute.integerRange, catalogueIndex: index)
                var entry = UInt16(1) | UInt16(attribute.type.rawValue) << 1 | UInt16(attribute.classMask) << 4
                if let range = attribute.integerRange {
                    ranges.append(range)
                    entry |= UInt16(ranges.count) << 8
                }
                precondition(attribute.type.rawValue < 8 && attribute.classMask < 16 && ranges.count < 256, "a compact entry")
                compact[slot] = entry
            }
            self.shapes = shapes
            self.compact = compact
            integerRanges = ranges
        }

        /// Where the attribute with `tag` would be in ``compact`` (and the shapes), or `nil` for a tag outside the
        /// table; the slot of a tag inside it may still be empty.
        @inline(__always)
        func slot(ofTag tag: UInt16) -> Int? {
            let group = Int(tag >> 8), member = Int(tag & 0xFF)
            guard group < groupCount, member < Self.membersPerGroup else { return nil }
            return group &* Self.membersPerGroup &+ member
        }

        /// The shape of the attribute with `tag`, or `nil` for a tag SPEC.md §8.2 does not define.
        @inline(__always)
        func shape(withTag tag: UInt16) -> AttributeShape? {
            guard let slot = slot(ofTag: tag) else { return nil }
            return shapes[slot]
        }
    }
}
