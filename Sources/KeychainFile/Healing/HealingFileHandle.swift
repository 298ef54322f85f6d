@_spi(KeychainFileInternals) import KeychainCrypto

/// A format version 2 log as a ``KeychainFileHandle``: the logical byte stream of its records, so that code
/// reading a log by offsets — replay, the recovering reader — reads version 2 unchanged.
///
/// Offsets and size are logical: the size is the log's written end, and a read maps through the chunks.
/// A chunk whose bytes do not match its parity (or cannot be read) is read as ``HealingLog/repair(chunk:)``
/// proposes it; its codewords that cannot be repaired read as they are. Those bytes are proposals: the reader
/// accepts them only if they verify by their tags, as replay does, and nothing is written back here.
///
/// The log is written only by appends, through ``append(_:committedEnd:headSequence:headChain:flushBetween:)``;
/// a positional write throws, and a truncation is a ``HealingLog/cut(to:)``, which never goes below the
/// committed end. While the handle is open the log is used only through it.
///
/// `@unchecked Sendable`: every use of the log and of the checked-chunk cache happens under `lock`.
///
/// For example:
/// ```swift
/// let handle = HealingFileHandle(log: try HealingLog(opening: file, headerKey: key, epoch: 1))
/// let records = try handle.readExactly(count: try handle.size(), at: 0)
/// ```
final class HealingFileHandle: KeychainFileHandle, @unchecked Sendable {
    private let log: HealingLog
    private let lock = Lock()
    /// Chunks whose bytes matched their parity when last read, for the log's written end and commit then.
    private var clean: Set<Int> = []
    /// The last damaged chunk read, as repaired (sequential reads ask for one chunk many times).
    private var repaired: (chunk: Int, data: [UInt8])?
    /// The written end and commit counter the two caches describe.
    private var cachedFor: (writtenEnd: Int, counter: UInt64?) = (0, nil)

    init(log: HealingLog) {
        self.log = log
        cachedFor = (log.writtenEnd, log.committed?.counter)
    }

    var path: String { log.file.path }
    var writeRefusal: Int32? { log.file.writeRefusal }

    func linkCount() throws(KeychainError) -> Int { try log.file.linkCount() }

    /// Reads up to `buffer.count` log bytes at logical offset `offset`; 0 at the log's written end.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        try locked { () throws(KeychainError) -> Int in
            guard offset >= 0 else { throw .invalidParameter("a read at log offset \(offset), before the log's start") }
            forgetChangedChunks()
            let end = log.writtenEnd
            guard offset < end, buffer.count > 0 else { return 0 }
            let count = min(buffer.count, end - offset)
            var done = 0
            while done < count {
                let position = offset + done
                let chunk = position / ChunkParity.dataLength
                let inChunk = position % ChunkParity.dataLength
                let length = min(count - done, ChunkParity.dataLength - inChunk)
                let bytes: [UInt8]
                if let data = try repairedBytes(ofChunk: chunk) {
                    bytes = Array(data[inChunk..<(inChunk + length)])
                } else {
                    bytes = try log.read(at: position, count: length)
                }
                UnsafeMutableRawBufferPointer(rebasing: buffer[done..<(done + length)]).copyBytes(from: bytes)
                done += length
            }
            return count
        }
    }

    /// Throws: a version 2 log is written only by appends.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        throw .invalidParameter(
            "a version 2 log is written only by appends through its HealingLog; a write of \(bytes.count) bytes at log offset \(offset) is refused")
    }

    /// The log's written end.
    func size() throws(KeychainError) -> Int {
        try locked { log.writtenEnd }
    }

    /// Cuts the log back to `size` (``HealingLog/cut(to:)``): never below its committed end.
    ///
    /// - Throws: `KeychainError.invalidParameter` if `size` is below the committed end or past the written end
    ///   (a log grows only by appends); otherwise as ``HealingLog/cut(to:)``.
    func truncate(to size: Int) throws(KeychainError) {
        try locked { () throws(KeychainError) in try log.cut(to: size) }
    }

    /// Appends and commits, as ``HealingLog/append(_:committedEnd:headSequence:headChain:flushBetween:)``.
    func append(_ bytes: [UInt8], committedEnd: Int, headSequence: UInt64, headChain: [UInt8], flushBetween: Bool = false) throws(KeychainError) {
        try locked { () throws(KeychainError) in
            try log.append(bytes, committedEnd: committedEnd, headSequence: headSequence, headChain: headChain, flushBetween: flushBetween)
        }
    }

    /// Appends and cuts are durable when they return; this syncs the file once more.
    func sync() throws(KeychainError) { try log.file.sync() }

    func identity() throws(KeychainError) -> FileIdentity { try log.file.identity() }

    func close() { log.file.close() }

    /// The repaired bytes of chunk `chunk` if its bytes as read do not match its parity, or `nil` if they do
    /// (then they are read from the file as they are).
    private func repairedBytes(ofChunk chunk: Int) throws(KeychainError) -> [UInt8]? {
        if clean.contains(chunk) { return nil }
        if let repaired, repaired.chunk == chunk { return repaired.data }
        let start = chunk * ChunkParity.dataLength
        let count = min(ChunkParity.dataLength, log.writtenEnd - start)
        let read = HealingLog.readTolerating(log.file, count: count, at: HealingLayout.physical(start))
        if read.unreadable.isEmpty, let parity = expectedParity(ofChunk: chunk, count: count), parity == ChunkParity(chunk: read.bytes) {
            clean.insert(chunk)
            return nil
        }
        let data = try log.repair(chunk: chunk).data
        repaired = (chunk, data)
        return data
    }

    /// The parity chunk `chunk` (of `count` bytes) should have: a complete chunk's as stored after it, the last
    /// chunk's as the log keeps it (or as the newest slot stored it); `nil` if none is known or readable.
    private func expectedParity(ofChunk chunk: Int, count: Int) -> ChunkParity? {
        if count == ChunkParity.dataLength {
            let stored = HealingLog.readTolerating(log.file, count: ChunkParity.parityLength, at: HealingLayout.parityOffset(ofChunk: chunk))
            return stored.unreadable.isEmpty ? ChunkParity(storedBytes: stored.bytes) : nil
        }
        return log.tailParity ?? log.newestParity
    }

    /// Drops what the caches say about chunks an append or a cut changed since they were filled.
    private func forgetChangedChunks() {
        let now = (writtenEnd: log.writtenEnd, counter: log.committed?.counter)
        guard now != cachedFor else { return }
        let firstChanged = min(cachedFor.writtenEnd, now.writtenEnd) / ChunkParity.dataLength
        clean = clean.filter { $0 < firstChanged }
        if let repaired, repaired.chunk >= firstChanged { self.repaired = nil }
        cachedFor = now
    }

    private func locked<Result>(_ body: () throws(KeychainError) -> Result) throws(KeychainError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
