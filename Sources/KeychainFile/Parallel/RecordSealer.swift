import Dispatch
@_spi(KeychainFileInternals) import KeychainCrypto

/// Seals the boxes of a record's entries, a window of entries at a time, on several threads for a large window.
///
/// Every box's associated data holds the tag of the box before it (SPEC.md §7.2), so sealing box after box is
/// serial. But AES-GCM's ciphertext does not depend on the associated data, and its tag depends on it linearly
/// (``AES/GCM/DeferredSlot``). So each window is sealed in three steps:
///
/// 1. on the calling thread, in entry order: each box's nonce drawn from the generator (attributes box, then
///    secret box; or the deletion box), and each secret box given its place (the block a batch reserved for
///    the item, or a part of the record's arena);
/// 2. on up to ``ParallelTuning/workerCount`` threads: every box sealed with the previous chain value in its
///    associated data at zero (the attributes encoded, both boxes encrypted and authenticated);
/// 3. on the calling thread, in entry order: each box's tag completed with the real previous chain value (two
///    field multiplications), the chain value written before each secret box, and the boxes handed on.
///
/// The boxes are byte for byte those that sealing one after another with the same generator gives, whatever
/// the tuning: the nonces are drawn in the same order and nothing else is random.
struct RecordSealer {
    /// What every box of a record is bound to: the file's context and the record's fields, as a reader sees them
    /// (Sendable: step 2's threads read them).
    typealias Record = RecordDecoder.RecordFields

    let record: Record
    let tuning: ParallelTuning
    /// Completes tags once the previous chain value is known.
    private let slot: AES.GCM.DeferredSlot

    /// The most entries in a window, and the most bytes of attributes (and, for a rewrite, of secrets) in one:
    /// what step 2 keeps as sealed boxes in the window's buffer until step 3 hands them on.
    static let windowEntryLimit = 1_024
    static let windowByteLimit = 1 << 18

    init(context: RecordContext, sequence: UInt64, kind: RecordKind, entryCount: UInt32, tuning: ParallelTuning) throws(KeychainError) {
        record = Record(sequence: sequence, kind: kind, entryCount: entryCount, context: context)
        self.tuning = tuning
        do {
            slot = try AES.GCM.DeferredSlot(key: context.recordKey, slotOffset: BoxAAD.previousChainOffset, authenticatedByteCount: BoxAAD.size)
        } catch {
            throw .invalidParameter("preparing to seal a record: \(error)")
        }
    }

    /// Where a put's secret box goes.
    enum SecretTarget {
        /// In place, in the block a batch reserved for the item (see ``ItemBytes``).
        case reserved(ItemBytes)
        /// In the part of an arena that starts at `offset` (chain value ‖ box).
        case arena(ItemBytes, offset: Int)
        /// In the window's buffer at `offset`, only to be written: a rewrite reads the boxes back from the new
        /// file once it is in place rather than holding every one until then.
        case window(offset: Int)
    }

    /// Where step 3 left a put's sealed secret box.
    enum SealedBox {
        /// Kept in memory (a reserved block or an arena part), with its chain value before it.
        case kept(ByteView)
        /// Only written, at `frameOffset` in the frame.
        case written(frameOffset: Int, byteCount: Int)
    }

    /// One entry of a window: what step 1 decided for it.
    struct Job {
        let entryIndex: UInt32
        let entry: LogEntry
        /// The nonce of the attributes box or of the deletion box.
        let nonce: AES.GCM.Nonce
        /// A put's secret box: its nonce, its place, and its plaintext when the place does not hold it already.
        let secretNonce: AES.GCM.Nonce?
        let secretTarget: SecretTarget?
        let secretPlaintext: [UInt8]?
        /// Where the attributes box or the deletion box goes in the window's buffer, and its size.
        let boxOffset: Int
        let boxByteCount: Int

        /// The size of the attributes box or deletion box of `entry`.
        static func firstBoxByteCount(_ entry: LogEntry) -> Int {
            switch entry {
            case .put(_, let attributes, _): AttributeCoding.encodedByteCount(attributes) + Format.boxOverhead
            case .delete, .deletion, .tombstone: 16 + Format.boxOverhead
            }
        }
    }

    /// The index after the last entry of the window that starts at `start`: the window's buffer holds its
    /// attributes boxes and, when `countingSecrets` (the encoder seals the secret boxes into the window too, for
    /// a rewrite), its secret boxes, at most ``windowByteLimit`` bytes of them unless one entry alone
    /// is larger.
    static func windowEnd<Entries: RandomAccessCollection<LogEntry>>(
        of entries: Entries, from start: Int, countingSecrets: Bool = false
    ) -> Int where Entries.Index == Int {
        var end = start
        var bytes = 0
        while end < entries.count, end - start < windowEntryLimit {
            if case .put(_, let attributes, let secret) = entries[end] {
                let entryBytes = attributes.encoded.count + (countingSecrets ? secret.count : 0)
                // At least one entry, however large.
                if end > start, bytes + entryBytes > windowByteLimit { break }
                bytes += entryBytes
            }
            end += 1
        }
        return end
    }

    /// Step 2: seals every job's boxes with zero previous chain values, the first box of each into `boxes` (the
    /// window's buffer) and the secret box into its place, on several threads for a large window. Throws the
    /// error of the first job (in entry order) that failed. Nothing here allocates, so that threads other than
    /// the caller's leave no memory behind in their allocator arenas.
    func seal(_ jobs: [Job], into boxes: UnsafeMutableRawBufferPointer) throws(KeychainError) {
        let record = self.record
        // A small window (a durable add's one entry) is sealed here, with nothing to weigh or collect.
        let shares = jobs.count >= max(tuning.minimumParallelEntries, 2) ? tuning.shareBounds(weights: jobs.map(Self.weight)) : []
        guard shares.count > 2 else {
            for job in jobs { try Self.sealWithZeroChain(job, record, boxes) }
            return
        }
        var failures = [KeychainError?](repeating: nil, count: jobs.count)
        jobs.withUnsafeBufferPointer { jobBuffer in
            failures.withUnsafeMutableBufferPointer { failureBuffer in
                // The threads read the jobs and write disjoint failure slots, parts of `boxes` and secret
                // targets (each job's box and its secret's block or arena part are its own); every buffer
                // outlives them (concurrentPerform returns when every share is done). That is why the
                // unchecked pointers are safe to share.
                nonisolated(unsafe) let jobs = jobBuffer
                nonisolated(unsafe) let failures = failureBuffer
                nonisolated(unsafe) let boxes = boxes
                DispatchQueue.concurrentPerform(iterations: shares.count - 1) { share in
                    for index in shares[share]..<shares[share + 1] {
                        do throws(KeychainError) { try Self.sealWithZeroChain(jobs[index], record, boxes) } catch { failures[index] = error; break }
                    }
                }
            }
        }
        if let failure = failures.lazy.compactMap({ $0 }).first { throw failure }
    }

    /// The work a job costs, roughly: its bytes to seal.
    private static func weight(_ job: Job) -> Int {
        switch job.entry {
        case .put(_, let attributes, let secret): 64 + attributes.encoded.count + secret.count
        case .delete, .deletion, .tombstone: 64
        }
    }

    private static func sealWithZeroChain(_ job: Job, _ record: Record, _ boxes: UnsafeMutableRawBufferPointer) throws(KeychainError) {
        let key = record.boxKey
        let box = UnsafeMutableRawBufferPointer(rebasing: boxes[job.boxOffset..<(job.boxOffset + job.boxByteCount)])
        let plaintext = UnsafeMutableRawBufferPointer(rebasing: box[Format.nonceSize..<(box.count - Format.tagSize)])
        switch job.entry {
        case .put(let id, let attributes, let secret):
            AttributeCoding.write(id: id, attributes: attributes, into: plaintext)
            try sealInPlace(box, record, job.entryIndex, .attributes, nil, key: key, nonce: job.nonce)
            guard let target = job.secretTarget, let secretNonce = job.secretNonce else { preconditionFailure("a put has a secret box") }
            let boxByteCount = secret.count + Format.boxOverhead
            // The closures are passed as they are written, not kept in a constant first: a closure kept in a
            // constant captures copies (a retain of the record's key and file id for every box, contended by
            // the threads sealing at once); one passed directly borrows them.
            switch target {
            case .reserved(let block):
                try block.sealReserved { (box) throws(KeychainError) in
                    try sealSecret(into: box, job, record, id, key: key, nonce: secretNonce)
                }
            case .arena(let arena, let offset):
                try arena.sealInArena(at: offset, boxByteCount: boxByteCount) { (box) throws(KeychainError) in
                    try sealSecret(into: box, job, record, id, key: key, nonce: secretNonce)
                }
            case .window(let offset):
                try sealSecret(
                    into: UnsafeMutableRawBufferPointer(rebasing: boxes[offset..<(offset + boxByteCount)]), job, record, id,
                    key: key, nonce: secretNonce)
            }
        case .delete(let id), .deletion(let id, _):
            id.withUnsafeBytes { plaintext.copyMemory(from: $0) }
            try sealInPlace(box, record, job.entryIndex, .deletion, nil, key: key, nonce: job.nonce)
        case .tombstone:
            throw .invalidParameter("internal error: a version 1 record cannot hold a tombstone")
        }
    }

    /// Seals a put's secret box in `box`, copying the plaintext there first when the job carries it.
    @inline(__always)
    private static func sealSecret(
        into box: UnsafeMutableRawBufferPointer, _ job: Job, _ record: Record, _ id: ItemID, key: AES.GCM.PreparedKey,
        nonce: AES.GCM.Nonce
    ) throws(KeychainError) {
        if let bytes = job.secretPlaintext {
            bytes.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: box[Format.nonceSize...]).copyMemory(from: $0) }
        }
        try sealInPlace(box, record, job.entryIndex, .secret, id, key: key, nonce: nonce)
    }

    /// Step 3 for one job: completes its boxes' tags after `chain` and hands their fields to `writer`, which
    /// starts `writerOffset` bytes into the frame; returns where the put's sealed secret box is (`nil` for a
    /// deletion) and sets `chain` to the last box's tag.
    func complete(
        _ job: Job, in boxes: UnsafeMutableRawBufferPointer, after chain: inout [UInt8], writingTo writer: inout ByteWriter,
        at writerOffset: Int
    ) throws(KeychainError) -> SealedBox? {
        let box = UnsafeMutableRawBufferPointer(rebasing: boxes[job.boxOffset..<(job.boxOffset + job.boxByteCount)])
        try Self.completeTag(of: box, after: chain, slot: slot)
        if record.kind == .transaction {
            if case .put = job.entry { writer.writeUInt8(1) } else { writer.writeUInt8(2) }
        }
        writer.writeUInt32(UInt32(box.count))
        writer.writeBytes(UnsafeRawBufferPointer(box))
        chain = Array(box.suffix(Format.tagSize))
        guard let target = job.secretTarget, case .put(_, _, let secret) = job.entry else { return nil }
        let boxByteCount = secret.count + Format.boxOverhead
        let previous = chain
        let slot = self.slot
        let completeBox = { (box: UnsafeMutableRawBufferPointer) throws(KeychainError) in try Self.completeTag(of: box, after: previous, slot: slot) }
        let secretBox: ByteView
        switch target {
        case .reserved(let block):
            try block.completeReserved(chain: previous, complete: completeBox)
            secretBox = block.boxView
        case .arena(let arena, let offset):
            secretBox = try arena.completeInArena(at: offset, chain: previous, boxByteCount: boxByteCount, complete: completeBox)
        case .window(let offset):
            let box = UnsafeMutableRawBufferPointer(rebasing: boxes[offset..<(offset + boxByteCount)])
            try completeBox(box)
            writer.writeUInt32(UInt32(boxByteCount))
            let frameOffset = writerOffset + writer.count
            writer.writeBytes(UnsafeRawBufferPointer(box))
            chain = Array(box.suffix(Format.tagSize))
            return .written(frameOffset: frameOffset, byteCount: boxByteCount)
        }
        writer.writeUInt32(UInt32(boxByteCount))
        secretBox.withUnsafeBytes { writer.writeBytes($0) }
        chain = secretBox.withUnsafeBytes { Array($0.suffix(Format.tagSize)) }
        return .kept(secretBox)
    }

    private static func completeTag(
        of box: UnsafeMutableRawBufferPointer, after chain: [UInt8], slot: AES.GCM.DeferredSlot
    ) throws(KeychainError) {
        do {
            try chain.withBytes { (value) throws(CryptoKitError) in try slot.complete(tagOf: box, slot: value) }
        } catch {
            throw .invalidParameter("sealing a record box: \(error)")
        }
    }

    /// Seals the plaintext that `box` holds where the ciphertext goes (after the nonce's 12 bytes, before the
    /// tag's 16), turning `box` into nonce ‖ ciphertext ‖ tag, with associated data for the given entry and
    /// role whose previous chain value is zero.
    private static func sealInPlace(
        _ box: UnsafeMutableRawBufferPointer, _ record: Record, _ entryIndex: UInt32, _ role: BoxRole, _ itemID: ItemID?,
        key: AES.GCM.PreparedKey, nonce: AES.GCM.Nonce
    ) throws(KeychainError) {
        let plaintext = UnsafeRawBufferPointer(rebasing: box[Format.nonceSize..<(box.count - Format.tagSize)])
        let outcome: Result<Void, CryptoKitError> = withUnsafeTemporaryAllocation(byteCount: BoxAAD.size, alignment: 8) { aad in
            BoxAAD.writeWithZeroChain(
                fileID: record.context.fileID, epoch: record.context.epoch, sequence: record.sequence, kind: record.kind,
                entryCount: record.entryCount, entryIndex: entryIndex, role: role, itemID: itemID, into: aad)
            // GCM encrypts in place: the plaintext pointer may be the ciphertext's (AESGCMContext.seal).
            return Result { () throws(CryptoKitError) in
                try AES.GCM.seal(plaintext, using: key, nonce: nonce, authenticating: UnsafeRawBufferPointer(aad), into: box)
            }
        }
        do {
            try outcome.get()
        } catch {
            throw .invalidParameter("sealing a record box: \(error)")
        }
    }
}
