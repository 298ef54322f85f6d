import Dispatch
@_spi(KeychainFileInternals) import KeychainCrypto

/// A version 2 log of items in memory, and an open of it that verifies every box: what `kcf-bench open-v2`
/// measures — the record layout's own cost, without the file or the index (Docs/FormatVersion2.md §8 step 3). The open
/// scans the records' frames on one thread, verifies and decodes the pages (and checks every secret's digest
/// and tag) on `threads` threads, and puts each item in a dictionary by id — a stand-in for the index, which it
/// under-counts.
///
/// ```swift
/// let probe = try OpenProbeV2(items: items)
/// let count = try probe.open(threads: 2)
/// ```
package struct OpenProbeV2: Sendable {
    let bytes: [UInt8]
    let keys: RecordKeysV2
    let initialChain: [UInt8]
    /// The items written.
    package let itemCount: Int
    /// The log's size in bytes (records only: no header, no parity).
    package var byteCount: Int { bytes.count }
    /// How many records the items took.
    package let recordCount: Int

    /// Writes `items` as a rewrite would: records of at most 16 MiB, each of 8 KiB pages after their secrets.
    package init<Item: KeychainItem>(items: [Item]) throws(KeychainError) {
        var random = SystemRandomNumberGenerator()
        let fileID = randomBytes(16, using: &random)
        keys = try RecordKeysV2(
            fileID: fileID, epoch: 1, recordKey: SymmetricKey(data: randomBytes(32, using: &random)),
            secretKey: SymmetricKey(data: randomBytes(32, using: &random)))
        initialChain = randomBytes(16, using: &random)
        var entries: [EntryV2] = []
        entries.reserveCapacity(items.count)
        let milliseconds: Int64 = 1_764_000_000_000
        for item in items {
            let attributes = try item.attributes.withDefaults()
                .reservingWithDates(created: milliseconds, modified: milliseconds, secret: item.value ?? [])
            entries.append(.put(id: ItemID(using: &random), attributes: attributes, secret: item.value ?? []))
        }
        var log: [UInt8] = []
        var chain = initialChain
        var sequence: UInt64 = 1
        var start = 0
        var records = 0
        while start < entries.count {
            // As many entries as fit 16 MiB: halve the slice until it does.
            var end = min(entries.count, start + 40_000)
            while true {
                do {
                    let record = try RecordV2Encoder.encode(
                        Array(entries[start..<end]), kind: .commit, sequence: sequence, part: 0, previousChain: chain,
                        keys: keys, using: &random)
                    log += record.bytes
                    chain = record.chain
                    break
                } catch .limitReached where end - start > 1 {
                    end = start + (end - start) / 2
                }
            }
            sequence += 1
            records += 1
            start = end
        }
        bytes = log
        itemCount = entries.count
        recordCount = records
    }

    /// A probe over a log written elsewhere, records from the start of `bytes` chained from `initialChain`.
    init(bytes: [UInt8], keys: RecordKeysV2, initialChain: [UInt8], itemCount: Int, recordCount: Int) {
        self.bytes = bytes
        self.keys = keys
        self.initialChain = initialChain
        self.itemCount = itemCount
        self.recordCount = recordCount
    }

    /// Opens the log: every page decrypted, every secret's digest and tag checked, every item put in a dictionary.
    ///
    /// - Returns: the number of items found.
    /// - Throws: `.corrupted` for any box that does not verify, or a record whose pages hold another number of
    ///   entries than it declares.
    package func open(threads: Int) throws(KeychainError) -> Int {
        var jobs: [(record: RecordV2Decoder.Scanned, recordIndex: Int, page: RecordV2Decoder.Page, previousChain: [UInt8])] = []
        var records: [RecordV2Decoder.Scanned] = []
        var offset = 0
        var chain = initialChain
        var entryTotal = 0
        while offset < bytes.count {
            let scanned = try RecordV2Decoder.scan(bytes, at: offset)
            for page in scanned.pages { jobs.append((scanned, records.count, page, chain)) }
            records.append(scanned)
            chain = Array(bytes[scanned.chainRange])
            entryTotal += Int(scanned.entryCount)
            offset = scanned.end
        }
        let shares = max(1, threads)
        let output = ShareOutcomes(count: shares)
        let bytes = bytes, keys = keys, pageJobs = jobs, expected = entryTotal
        DispatchQueue.concurrentPerform(iterations: shares) { share in
            let range = (pageJobs.count * share / shares)..<(pageJobs.count * (share + 1) / shares)
            var decoded: [DecodedEntryV2] = []
            decoded.reserveCapacity(expected / shares + 64)
            var perPage: [Int] = []
            perPage.reserveCapacity(range.count)
            do throws(KeychainError) {
                for index in range {
                    let job = pageJobs[index]
                    let entries = try RecordV2Decoder.openPage(job.page, of: job.record, in: bytes, previousChain: job.previousChain, keys: keys)
                    decoded += entries
                    perPage.append(entries.count)
                }
                output.slots[share] = .success(ShareOutput(entries: decoded, entriesPerPage: perPage))
            } catch {
                output.slots[share] = .failure(error)
            }
        }
        var index: [ItemID: Int] = [:]
        index.reserveCapacity(entryTotal)
        var perRecord = [Int](repeating: 0, count: records.count)
        var position = 0
        var page = 0
        for share in 0..<shares {
            let outcome = try output.slots[share].get()
            for entry in outcome.entries {
                if case .put(let id, _, _) = entry { index[id] = position }
                position += 1
            }
            for count in outcome.entriesPerPage {
                perRecord[jobs[page].recordIndex] += count
                page += 1
            }
        }
        for (number, record) in records.enumerated() where perRecord[number] != Int(record.entryCount) {
            throw .corrupted(offset: record.start + 21, reason: "the record declares \(record.entryCount) entries; its pages hold \(perRecord[number])")
        }
        return index.count
    }
}

/// What one share decoded: its pages' entries in order, and how many each page held.
private struct ShareOutput {
    let entries: [DecodedEntryV2]
    let entriesPerPage: [Int]
}

/// One outcome per share, each written by the one thread that decodes that share.
///
/// `@unchecked Sendable`: threads write distinct elements of `slots` only, and the caller reads them after
/// `concurrentPerform` has returned.
private final class ShareOutcomes: @unchecked Sendable {
    let slots: UnsafeMutableBufferPointer<Result<ShareOutput, KeychainError>>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: .success(ShareOutput(entries: [], entriesPerPage: [])))
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }
}
