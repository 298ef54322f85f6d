/// A group's page that ``RecordV3Decoder`` opened, as the next page of the group's chain.
struct OpenedPageV3: Sendable, Equatable {
    let keyID: UInt8
    /// Its place in the group's chain, from 1.
    let groupSequence: UInt64
    /// Its tag: the previous tag of the group's next page.
    let tag: [UInt8]
    /// Its entries, verified; a put's secret box is a range in the bytes decoded.
    let entries: [DecodedEntryV2]
    /// The whole segment in the bytes decoded, for a rewrite that copies it as it is.
    let segment: Range<Int>
}
