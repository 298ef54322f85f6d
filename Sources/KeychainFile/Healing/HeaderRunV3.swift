/// One copy of a version 3 header as a run of 1 … 16 header pages (Docs/FormatVersion3.md §2.9): the header's
/// bytes cut into 3,568-byte pieces, the last padded with zeros, each piece in a 4 KiB page with its own parity as
/// a version 2 ``HeaderPage`` has. A run of one page is byte for byte a version 2 header page's layout, so a file
/// with few credentials and groups keeps version 2's 32 KiB prefix.
///
/// The file's prefix for a run of `n` pages: run A at 0, commit slot 0 at 4,096·n, commit slot 1 12 KiB later,
/// run B 24 KiB after commit slot 0, and the log after run B. The header's length, in its first 16 bytes, gives `n`.
///
/// ```swift
/// let run = HeaderRunV3.encode(headerBytes)                 // n × 4,096 bytes
/// HeaderRunV3.decode(run, pageCount: n)                      // .intact(headerBytes)
/// HeaderRunV3.logStart(pageCount: 1)                         // 32,768, as version 2
/// ```
enum HeaderRunV3 {
    static let maximumPages = 16

    /// The pages a header of `length` bytes takes.
    static func pageCount(forLength length: Int) -> Int { max(1, (length + HeaderPage.blockLength - 1) / HeaderPage.blockLength) }

    /// Where the commit slots stand when each run has `pageCount` pages.
    static func commitSlotOffsets(pageCount: Int) -> [Int] {
        let first = pageCount * HeaderPage.length
        return [first, first + HealingLayout.slotStride]
    }

    /// Where run B starts.
    static func runBOffset(pageCount: Int) -> Int { pageCount * HeaderPage.length + 2 * HealingLayout.slotStride }

    /// Where the log's first chunk starts.
    static func logStart(pageCount: Int) -> Int { runBOffset(pageCount: pageCount) + pageCount * HeaderPage.length }

    /// The run for a header's bytes (at most ``FileHeaderV3/maximumLength``).
    static func encode(_ header: [UInt8]) -> [UInt8] {
        precondition(header.count <= maximumPages * HeaderPage.blockLength, "HeaderRunV3: a header longer than sixteen pages")
        let count = pageCount(forLength: header.count)
        var run: [UInt8] = []
        run.reserveCapacity(count * HeaderPage.length)
        for page in 0..<count {
            let start = page * HeaderPage.blockLength
            run += HeaderPage.encode(Array(header[start..<min(header.count, start + HeaderPage.blockLength)]))
        }
        return run
    }

    /// The page counts the run's first page declares (its header's length): as read, and as its parity repairs it
    /// when that differs — a damaged length field can declare another count that is still in range, so both are
    /// tried, and the checksum decides. Empty when neither holds a version 3 header's first 16 bytes.
    static func declaredPageCounts(firstPage: [UInt8]) -> [Int] {
        let page = padded(firstPage, to: HeaderPage.length)
        var counts: [Int] = []
        if let length = FileHeaderV3.declaredLength(Array(page[0..<16])) { counts.append(pageCount(forLength: length)) }
        var block = Array(page[0..<HeaderPage.blockLength])
        var parity = Array(page[HeaderPage.blockLength..<(HeaderPage.blockLength + HeaderPage.parity.parityLength)])
        if (try? HeaderPage.parity.repair(block: &block, parity: &parity)) != nil,
           let length = FileHeaderV3.declaredLength(Array(block[0..<16])), !counts.contains(pageCount(forLength: length)) {
            counts.append(pageCount(forLength: length))
        }
        return counts
    }

    /// Reads a run of `pageCount` pages (shorter bytes count as zeros): the header as read when its structure and
    /// checksum verify — `.intact` when every page's pad and parity agree with it, `.repaired` when not — else the
    /// header that the pages' parity proposes, if its checksum verifies. Parity only proposes; the checksum, then
    /// the MAC, decide.
    static func decode(_ run: [UInt8], pageCount: Int, fileOffset: Int = 0) -> HeaderPage.Copy {
        guard (1...maximumPages).contains(pageCount) else { return .unusable(reason: "a run of \(pageCount) header pages") }
        let run = padded(run, to: pageCount * HeaderPage.length)
        var asRead: [UInt8] = [], repaired: [UInt8] = []
        var disagreeing = 0, unrepaired = 0
        for page in 0..<pageCount {
            let start = page * HeaderPage.length
            var block = Array(run[start..<(start + HeaderPage.blockLength)])
            var parity = Array(run[(start + HeaderPage.blockLength)..<(start + HeaderPage.blockLength + HeaderPage.parity.parityLength)])
            let tailIsZero = run[(start + HeaderPage.blockLength + HeaderPage.parity.parityLength)..<(start + HeaderPage.length)].allSatisfy { $0 == 0 }
            asRead += block
            if let outcome = try? HeaderPage.parity.repair(block: &block, parity: &parity) {
                disagreeing += outcome.blockOffsets.count + outcome.parityOffsets.count + (tailIsZero ? 0 : 1)
                unrepaired += outcome.unrepairedCodewords.count
            } else {
                // Not reached: the block and parity have the sizes the parity layout was made for.
                unrepaired += 1
            }
            repaired += block
        }
        switch header(in: asRead, pageCount: pageCount, fileOffset: fileOffset) {
        case .success(let bytes):
            if disagreeing == 0, unrepaired == 0 { return .intact(bytes) }
            return .repaired(bytes, repairedBytes: max(1, disagreeing))
        case .failure(let error):
            if case .success(let bytes) = header(in: repaired, pageCount: pageCount, fileOffset: fileOffset) {
                return .repaired(bytes, repairedBytes: max(1, disagreeing))
            }
            return .unusable(reason: "\(error); \(unrepaired) of \(pageCount * HeaderPage.parity.depth) codewords beyond repair")
        }
    }

    /// The header at the start of `bytes`, if its length fits the run and its structure and checksum verify.
    private static func header(in bytes: [UInt8], pageCount: Int, fileOffset: Int) -> Result<[UInt8], KeychainError> {
        guard let declared = FileHeaderV3.declaredLength(bytes), Self.pageCount(forLength: declared) == pageCount else {
            return .failure(.corrupted(offset: fileOffset, reason: "no version 3 header of \(pageCount) page\(pageCount == 1 ? "" : "s") (magic, version, flags or length)"))
        }
        let candidate = Array(bytes[0..<declared])
        do {
            _ = try FileHeaderV3.parse(candidate, fileOffset: fileOffset)
        } catch {
            return .failure(error)
        }
        return .success(candidate)
    }

    private static func padded(_ bytes: [UInt8], to count: Int) -> [UInt8] {
        bytes.count >= count ? Array(bytes.prefix(count)) : bytes + [UInt8](repeating: 0, count: count - bytes.count)
    }
}
