/// What a merge reads of one copy's log to find the history it shares with another copy (SPEC.md §43.9): the header
/// fields two copies must share, how far the copy's replay applied its records, and where to read its log again.
///
/// Each copy's log is read through a file handle of its own, opened at its path and checked to be the file its
/// keychain read: the keychain's own handle may be closed by another thread's catch-up meanwhile, and a merge never
/// holds two keychains' locks. No writer of this library rewrites records below a copy's end in place, but another
/// program may (`cp` or `rsync --inplace` over the file, keeping its inode): so the last record the copy's keychain
/// verified is read again, before the bytes are compared and after, and its chain value must be the one verified.
/// That value covers every record before it (SPEC.md §24.7, §35.8), so the bytes compared are those the keychain read.
struct CopyHistory {
    let formatVersion: Int
    let fileID: [UInt8]
    let epoch: UInt64
    /// The header's rewrite end: the records before it were written by the rewrite that began the epoch.
    let rewriteEnd: Int
    /// The end of the last commit the copy's replay applied (`E`, §25.2).
    let end: Int
    /// The chain value of the record ending at `end`: its last 16 bytes (the last page's tag in version 2, the chain
    /// tag in version 3).
    let headChain: [UInt8]
    let path: String
    let fileSystem: any FileSystem
    let identity: FileIdentity
    /// Version 3: the pages in each header run, which move the log (``HeaderRunShiftedFileHandle``); 1 in version 2.
    let headerPageCount: Int

    /// Bytes compared at a time.
    private static let blockSize = 1 << 20

    /// The first log offset below both copies' ends at which their logs' bytes, as the files store them, differ
    /// (both ends' minimum when none does): `D` of SPEC.md §43.9. `nil` when the copies cannot share history — other
    /// format versions, file ids, epochs or rewrite ends — or when the other copy's file is no longer the one its
    /// keychain read.
    ///
    /// A byte that cannot be read counts as differing, as does a failure to read at all: a shared history that ends
    /// early gives an earlier base, which both copies still came from.
    static func divergence(of ours: CopyHistory, and theirs: CopyHistory) -> Int? {
        guard ours.formatVersion >= 2, ours.formatVersion == theirs.formatVersion, ours.fileID == theirs.fileID,
              ours.epoch == theirs.epoch, ours.rewriteEnd == theirs.rewriteEnd
        else { return nil }
        guard let ourFile = ours.openLog() else { return nil }
        defer { ourFile.file.close() }
        guard let theirFile = theirs.openLog() else { return nil }
        defer { theirFile.file.close() }
        guard ours.holdsItsHead(ourFile.log), theirs.holdsItsHead(theirFile.log) else { return nil }
        let end = min(ours.end, theirs.end)
        var position = 0
        while position < end {
            let count = min(blockSize, end - position)
            let mine = readLog(ourFile.log, at: position, count: count)
            let other = readLog(theirFile.log, at: position, count: count)
            let unreadable = mine.unreadable.union(other.unreadable)
            if unreadable.isEmpty && mine.bytes == other.bytes {
                position += count
                continue
            }
            let mismatch = mine.bytes.indices.first { mine.bytes[$0] != other.bytes[$0] } ?? count
            position += min(mismatch, unreadable.min() ?? count)
            break
        }
        guard ours.holdsItsHead(ourFile.log), theirs.holdsItsHead(theirFile.log) else { return nil }
        return position
    }

    /// Whether `log` (this copy's file, opened again) holds the record its keychain verified last, at `end`.
    private func holdsItsHead(_ log: any KeychainFileHandle) -> Bool {
        guard end >= headChain.count, !headChain.isEmpty else { return end == 0 }
        let read = Self.readLog(log, at: end - headChain.count, count: headChain.count)
        return read.unreadable.isEmpty && read.bytes == headChain
    }

    /// The copy's file opened again for reading (for the caller to close), and the same file seen as its log
    /// (``HeaderRunShiftedFileHandle``); nil when the file at the path is no longer the one its keychain read.
    private func openLog() -> (file: any KeychainFileHandle, log: any KeychainFileHandle)? {
        guard let opened = try? fileSystem.openReadOnly(path, refusal: 0) else { return nil }
        guard (try? opened.identity()) == identity else {
            opened.close()
            return nil
        }
        return (opened, HeaderRunShiftedFileHandle.logFile(opened, pageCount: headerPageCount))
    }

    /// `count` log bytes at logical offset `offset` (SPEC.md §18.2), and the offsets among them that could not be read.
    private static func readLog(_ file: any KeychainFileHandle, at offset: Int, count: Int) -> (bytes: [UInt8], unreadable: Set<Int>) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var unreadable: Set<Int> = []
        var position = offset
        while position < offset + count {
            let length = min(offset + count - position, ChunkParity.dataLength - position % ChunkParity.dataLength)
            let read = HealingLog.readTolerating(file, count: length, at: HealingLayout.physical(position))
            for lost in read.unreadable { unreadable.insert(position - offset + lost) }
            bytes += read.bytes
            position += length
        }
        return (bytes, unreadable)
    }
}
