/// The byte ranges of the record frames of a keychain file, read from the lengths in clear (SPEC.md §7.1: the
/// header length is the big-endian u32 at offset 12; each frame is an 8-byte header, whose first u32 is the body
/// length, and the body). Stops at the first frame that does not fit in the file. For tests and the fixture
/// generator, which damage particular records.
public func recordOffsets(of bytes: [UInt8]) -> [Range<Int>] {
    guard bytes.count >= 16 else { return [] }
    func u32(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
    var offset = u32(12)
    var ranges: [Range<Int>] = []
    while offset + 8 <= bytes.count {
        let end = offset + 8 + u32(offset)
        guard end <= bytes.count else { break }
        ranges.append(offset..<end)
        offset = end
    }
    return ranges
}
