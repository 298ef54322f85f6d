/// The first sector of each copy of a file's header, as this process last read or wrote it: what shows that a file
/// was written over in place — the same file (identity), often the same size, now holding another epoch's header,
/// as a copy put back byte for byte (`cp`, `rsync --inplace`, a backup restored) leaves it.
///
/// Identity and size alone miss that case, and a log that missed it would append records of its old epoch to a
/// file of a newer one: a commit no later open reads. Every epoch's header has a random 32-byte salt within its
/// first 72 bytes (every format version), so two epochs' headers never share a first sector; damage that stays as
/// it was reads the same each time, and an unreadable sector reads as zeros each time. Each check reads one sector
/// per copy, from the open file.
///
/// ```swift
/// let seen = HeaderFingerprint(reading: file, at: OpenedHeaderV2.pageOffsets)   // before the header is opened
/// if !seen.matches(file) { /* read the file again from its header */ }
/// ```
struct HeaderFingerprint: Sendable {
    /// How many bytes of each copy are compared: one sector, holding the file id, the epoch and its salt.
    static let length = 512

    /// Where each copy starts, and its first bytes.
    private(set) var offsets: [Int]
    private(set) var sectors: [[UInt8]]

    /// The first sectors of the copies at `offsets`, read from `file`. A caller reads them before it opens the
    /// header, so that a change between the two shows at the next check rather than hiding behind it.
    init(reading file: any KeychainFileHandle, at offsets: [Int]) {
        self.offsets = offsets
        sectors = offsets.map { HealingLog.readTolerating(file, count: Self.length, at: $0).bytes }
    }

    /// The first sectors of `copies`, the header copies at `offsets` as this process read them (the bytes it opened
    /// the header from) or wrote them.
    init(copies: [[UInt8]], at offsets: [Int]) {
        precondition(copies.count == offsets.count, "HeaderFingerprint: one copy for each offset")
        self.offsets = offsets
        sectors = copies.map { Array($0.prefix(Self.length)) }
    }

    /// The first sectors of a header this process wrote: `copy` (the bytes of one copy as placed) at each offset.
    init(written copy: [UInt8], at offsets: [Int]) {
        self.init(copies: offsets.map { _ in copy }, at: offsets)
    }

    /// This fingerprint with the copy at `offset` read from `file` as well (or again).
    func adding(readFrom file: any KeychainFileHandle, at offset: Int) -> HeaderFingerprint {
        var result = self
        let sector = HealingLog.readTolerating(file, count: Self.length, at: offset).bytes
        if let index = offsets.firstIndex(of: offset) {
            result.sectors[index] = sector
        } else {
            result.offsets.append(offset)
            result.sectors.append(sector)
        }
        return result
    }

    /// This fingerprint after this process wrote `written` (a header copy's bytes) at `offset`.
    func replacing(at offset: Int, with written: [UInt8]) -> HeaderFingerprint {
        var result = self
        guard let index = offsets.firstIndex(of: offset) else { return result }
        result.sectors[index] = Array(written.prefix(Self.length))
        return result
    }

    /// Whether `file` still holds these first sectors at every offset.
    func matches(_ file: any KeychainFileHandle) -> Bool {
        zip(offsets, sectors).allSatisfy { (offset, sector) in
            HealingLog.readTolerating(file, count: sector.count, at: offset).bytes == sector
        }
    }
}
