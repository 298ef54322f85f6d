/// The first sector of each copy of a file's header, as this process last read or wrote it: what shows that a file
/// was written over in place — the same file (identity), often the same size, now holding another epoch's header,
/// as a copy put back byte for byte (`cp`, `rsync --inplace`, a backup restored) leaves it.
///
/// Identity and size alone miss that case, and a log that missed it would append records of its old epoch to a
/// file of a newer one: a commit no later open reads. Every epoch's header has a random 32-byte salt within its
/// first 72 bytes (every format version), so two epochs' headers never share a first sector. Damage that stays as
/// it was reads the same each time, and a sector that could not be read when the header was opened (the copy was
/// read around it) counts as unchanged while it still cannot be; any other failed read is an error, as every read
/// of the file is. Each check reads one sector per copy, from the open file.
///
/// ```swift
/// let seen = HeaderFingerprint(reads: [pageA, pageB], at: OpenedHeaderV2.pageOffsets)   // as the header was read
/// if try !seen.matches(file, size: size) { /* read the file again from its header */ }
/// ```
struct HeaderFingerprint: Sendable {
    /// How many bytes of each copy are compared: one sector, holding the file id, the epoch and its salt.
    static let length = 512

    /// A copy's bytes as read (``HealingLog/readTolerating(_:count:at:)``): the bytes, and those that could not be read.
    typealias Read = (bytes: [UInt8], unreadable: Set<Int>)

    /// Where each copy starts, its first sector, and whether that sector could not be read.
    private(set) var offsets: [Int]
    private(set) var sectors: [[UInt8]]
    private(set) var unreadable: [Bool]

    /// The first sectors of `reads`, the header copies at `offsets` as this process read them to open the header.
    init(reads: [Read], at offsets: [Int]) {
        precondition(reads.count == offsets.count, "HeaderFingerprint: one copy for each offset")
        self.offsets = offsets
        sectors = reads.map { Array($0.bytes.prefix(Self.length)) }
        unreadable = reads.map { (read) in read.unreadable.contains { $0 < Self.length } }
    }

    /// The first sectors of the copies at `offsets`, read from `file` now. A caller reads them before it opens the
    /// header, so that a change between the two shows at the next check rather than hiding behind it.
    init(reading file: any KeychainFileHandle, at offsets: [Int]) {
        self.init(reads: offsets.map { HealingLog.readTolerating(file, count: Self.length, at: $0) }, at: offsets)
    }

    /// The first sectors of a header this process wrote: `copy` (the bytes of one copy as placed) at each offset.
    init(written copy: [UInt8], at offsets: [Int]) {
        self.init(reads: offsets.map { _ in (copy, []) }, at: offsets)
    }

    /// This fingerprint with the copy at `offset` as well: `read` (that copy as the caller read it when it opened
    /// the header), or else its first sector read from `file` now.
    func adding(_ read: Read?, orReadFrom file: any KeychainFileHandle, at offset: Int) -> HeaderFingerprint {
        let copy = HeaderFingerprint(reads: [read ?? HealingLog.readTolerating(file, count: Self.length, at: offset)], at: [offset])
        var result = self
        result.offsets += copy.offsets
        result.sectors += copy.sectors
        result.unreadable += copy.unreadable
        return result
    }

    /// This fingerprint after this process wrote `written` (a header copy's bytes) at `offset`.
    func replacing(at offset: Int, with written: [UInt8]) -> HeaderFingerprint {
        var result = self
        guard let index = offsets.firstIndex(of: offset) else { return result }
        result.sectors[index] = Array(written.prefix(Self.length))
        result.unreadable[index] = false
        return result
    }

    /// Whether `file`, of `size` bytes, still holds these first sectors: `false` when one differs, or the file no
    /// longer reaches it (cut short: the caller reads it again from its header, which says what it is).
    ///
    /// - Throws: `.io` when a sector that was read when the header was opened cannot be read now.
    func matches(_ file: any KeychainFileHandle, size: Int) throws(KeychainError) -> Bool {
        for (index, offset) in offsets.enumerated() {
            let sector = sectors[index]
            guard size >= offset + sector.count else { return false }
            let now: [UInt8]
            do {
                now = try HealingLog.readRetrying(file, count: sector.count, at: offset)
            } catch {
                if unreadable[index] { continue }
                throw error
            }
            if now != sector { return false }
        }
        return true
    }
}
