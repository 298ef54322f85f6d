/// Where a version 2 log's transactions begin and end, from the records' frames alone (Docs/FormatVersion2.md
/// §5, "Transactions in parts"): a transaction is one commit record of part 0, or parts 0 … n−1 (kind 3) and a
/// commit of part n, contiguous. The frames are read before any box is opened, so an open knows which records
/// to apply before it decrypts anything; the pages' associated data authenticate kind and part afterwards.
///
/// ```swift
/// let layout = try TransactionLayout(records)    // records: RecordV2Decoder.scan of each frame, in order
/// layout.committedEnd                              // replay stops here
/// layout.undonePart                                // a trailing transaction without its commit, to cut
/// ```
struct TransactionLayout: Equatable, Sendable {
    /// The end of the last commit record (the log's start when there is none).
    let committedEnd: Int
    /// The records of a trailing transaction whose commit never reached the file: the next writer cuts them.
    let undonePart: Range<Int>?

    init(committedEnd: Int, undonePart: Range<Int>?) {
        self.committedEnd = committedEnd
        self.undonePart = undonePart
    }

    /// - Parameters:
    ///   - records: the frames of the log's records, in order, each starting where the one before ends.
    ///   - start: where the log's records begin.
    /// - Throws: `.corrupted` naming the record when parts are out of order or a transaction is left open
    ///   before another record: only the last transaction of a log can be incomplete (a writer holds the lock
    ///   from its first part to its commit, and an appender after a crash cuts the undone parts first).
    ///   - acknowledgedEnd: the end below which every record is acknowledged (the newest seal's committed end,
    ///     or the header's rewrite end): a transaction that looks unfinished there is damage — a flipped kind
    ///     byte, say — to repair or report, never a tail to cut.
    init(_ records: [RecordV2Decoder.Scanned], start: Int = 0, acknowledgedEnd: Int = 0) throws(KeychainError) {
        var committedEnd = start
        var open: (start: Int, nextPart: UInt32)? = nil
        for record in records {
            let expected = open?.nextPart ?? 0
            guard record.part == expected else {
                let reason = open == nil
                    ? "part \(record.part) of a transaction whose earlier parts are not before it"
                    : "part \(record.part) where part \(expected) of the open transaction was due"
                throw .corrupted(offset: record.start + 17, reason: "record \(record.sequence): \(reason)")
            }
            switch record.kind {
            case .commit:
                committedEnd = record.end
                open = nil
            case .part:
                guard record.part < UInt32.max else {
                    throw .corrupted(offset: record.start + 17, reason: "record \(record.sequence): part number exhausted")
                }
                open = (open?.start ?? record.start, record.part + 1)
            }
        }
        if let open, open.start < acknowledgedEnd {
            let first = records.first { $0.start == open.start }
            throw .corrupted(
                offset: open.start + 8,
                reason: "record \(first?.sequence ?? 0) reads as part of an unfinished transaction, but it lies below the acknowledged end \(acknowledgedEnd): its frame is damaged")
        }
        self.committedEnd = committedEnd
        undonePart = open.map { $0.start..<(records.last?.end ?? $0.start) }
    }
}
