/// Where a version 2 log's transactions begin and end, from the records' frames alone (Docs/FormatVersion2.md
/// §5, "Transactions in parts"): a transaction is one commit record of part 0, or parts 0 … n−1 (kind 3) and a
/// commit of part n, contiguous. The frames are read before any box is opened, so an open knows which records
/// to apply before it decrypts anything; the frame check has caught damage to them (`RecordV2Decoder.scan`),
/// and the pages' associated data authenticate kind and part afterwards.
///
/// ```swift
/// let layout = try TransactionLayout(records, acknowledgedEnd: seal.committedEnd)   // records: scan of each frame
/// layout.committedEnd                              // replay stops here
/// layout.undonePart                                // a trailing transaction without its commit, to cut
/// ```
struct TransactionLayout: Equatable, Sendable {
    /// The end of the last commit record (the log's start when there is none).
    let committedEnd: Int
    /// The records of a trailing transaction whose commit never reached the file: the next writer cuts them.
    /// Never below the acknowledged end the layout was given.
    let undonePart: Range<Int>?

    init(committedEnd: Int, undonePart: Range<Int>?) {
        self.committedEnd = committedEnd
        self.undonePart = undonePart
    }

    /// - Parameters:
    ///   - records: the frames of the log's records, in order, each starting where the one before ends, with
    ///     consecutive sequence numbers.
    ///   - start: where the log's records begin.
    ///   - acknowledgedEnd: the end below which every record is acknowledged (the newest seal's committed end,
    ///     or the header's rewrite end): it is the end of a transaction, and a transaction that looks
    ///     unfinished below it is damage, never a tail to cut.
    /// - Throws: `.corrupted` naming the record when records are not contiguous or their sequence numbers not
    ///   consecutive, when parts are out of order or a transaction is left open before another record (only the
    ///   last transaction of a log can be incomplete: a writer holds the lock from its first part to its commit,
    ///   and an appender after a crash cuts the undone parts first), or when the acknowledged end falls inside a
    ///   transaction or before an unfinished one.
    init(_ records: [RecordV2Decoder.Scanned], start: Int = 0, acknowledgedEnd: Int = 0) throws(KeychainError) {
        var committedEnd = start
        var open: (start: Int, nextPart: UInt32)? = nil
        var expectedStart = start
        var previousSequence: UInt64? = nil
        for record in records {
            guard record.start == expectedStart, record.end > record.start else {
                throw .corrupted(
                    offset: max(0, record.start),
                    reason: "record \(record.sequence) spans \(record.start) ..< \(record.end), but the record before it ends at \(expectedStart)")
            }
            if let previous = previousSequence, previous == .max || record.sequence != previous + 1 {
                throw .corrupted(
                    offset: record.start + 9,
                    reason: "record \(record.sequence) follows record \(previous): sequence numbers go up by one")
            }
            let expected = open?.nextPart ?? 0
            guard record.part == expected else {
                let reason = open == nil
                    ? "part \(record.part) of a transaction whose earlier parts are not before it"
                    : "part \(record.part) where part \(expected) of the transaction begun at \(open?.start ?? 0) was due"
                throw .corrupted(offset: record.start + 17, reason: "record \(record.sequence): \(reason)")
            }
            let transactionStart = open?.start ?? record.start
            switch record.kind {
            case .commit:
                committedEnd = record.end
                open = nil
            case .part:
                guard record.part < UInt32.max else {
                    throw .corrupted(offset: record.start + 17, reason: "record \(record.sequence): part number exhausted")
                }
                open = (transactionStart, record.part + 1)
            }
            // A seal's committed end is always a transaction's end: one that falls inside this record, or at the
            // end of a part, means a frame says other than what was written (a commit whose kind reads "part").
            if record.start < acknowledgedEnd, acknowledgedEnd <= record.end, acknowledgedEnd != committedEnd {
                throw .corrupted(
                    offset: record.start + 8,
                    reason: "record \(record.sequence) ends at \(record.end) inside a transaction begun at \(transactionStart), but the acknowledged end \(acknowledgedEnd) says a transaction ends \(acknowledgedEnd == record.end ? "there" : "at \(acknowledgedEnd)"): its frame is damaged")
            }
            expectedStart = record.end
            previousSequence = record.sequence
        }
        if let open, open.start < acknowledgedEnd {
            let first = records.first { $0.start == open.start }
            throw .corrupted(
                offset: open.start + 8,
                reason: "record \(first?.sequence ?? 0) reads as part of an unfinished transaction, but it lies below the acknowledged end \(acknowledgedEnd): its frame is damaged")
        }
        self.committedEnd = committedEnd
        undonePart = open.map { $0.start..<expectedStart }
    }
}
