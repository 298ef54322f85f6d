/// An entry of a version 2 page as ``RecordV2Decoder/parsePage(_:page:in:keys:)`` checks it, before anything is
/// copied out of the plaintext: a put's attributes are a range of the plaintext (item id, class and count
/// included, as ``AttributeCoding/check(_:)`` accepted them), its secret box a range of the record's bytes whose
/// digest and tag verified.
enum PageEntryV2: Sendable, Equatable {
    case put(id: ItemID, itemClass: ItemClass, attributeCount: Int, attributes: Range<Int>, secretBox: Range<Int>)
    case delete(id: ItemID, time: Int64)
    case tombstone(id: ItemID, time: Int64)
}
