/// A version 3 file whose header runs are `n` pages (Docs/FormatVersion3.md §2.9), seen with version 2's prefix:
/// the commit slots and run B's first page 4,096·(n − 1) bytes later than version 2 puts them, the log 8,192·(n − 1)
/// bytes later. The healing log (``HealingLog``), replay and parity are version 2's and address version 2's
/// places; through this view they read and write version 3's.
///
/// Offsets below 4,096 (run A's first page) are as they are; run A's and run B's other pages have no place in the
/// view, which only the engine writes, through the file itself. Closing the view does not close the file: its
/// owner does.
///
/// ```swift
/// let view = HeaderRunShiftedFileHandle(file, pageCount: 2)
/// HeaderRunShiftedFileHandle.physical(32_768, pageCount: 2)   // 40,960: the log's first byte
/// let log = try HealingLog(opening: view, headerKey: keys.header, epoch: epoch)
/// ```
final class HeaderRunShiftedFileHandle: KeychainFileHandle, @unchecked Sendable {
    let base: any KeychainFileHandle
    let pageCount: Int

    /// `@unchecked Sendable`: it holds nothing mutable; the file it wraps is `Sendable`.
    init(_ base: any KeychainFileHandle, pageCount: Int) {
        self.base = base
        self.pageCount = pageCount
    }

    /// The file, or the view of it, that a log of a file with `pageCount`-page runs is read and written through.
    static func logFile(_ file: any KeychainFileHandle, pageCount: Int) -> any KeychainFileHandle {
        pageCount == 1 ? file : HeaderRunShiftedFileHandle(file, pageCount: pageCount)
    }

    /// Where version 2's offset `offset` lies in a file of `pageCount`-page runs.
    static func physical(_ offset: Int, pageCount: Int) -> Int {
        if offset >= HealingLayout.logStart { return offset + 2 * HeaderPage.length * (pageCount - 1) }
        if offset >= HeaderPage.length { return offset + HeaderPage.length * (pageCount - 1) }
        return offset
    }

    /// Version 2's offset of the file's byte `physical` (a byte of run A's or B's later pages: the next one that has
    /// a place in the view).
    static func logical(_ physical: Int, pageCount: Int) -> Int {
        let logStart = HeaderRunV3.logStart(pageCount: pageCount)
        if physical >= logStart { return physical - 2 * HeaderPage.length * (pageCount - 1) }
        let slots = HeaderRunV3.commitSlotOffsets(pageCount: pageCount)[0]
        if physical >= slots { return min(physical - HeaderPage.length * (pageCount - 1), HealingLayout.logStart) }
        return min(physical, HeaderPage.length)
    }

    /// The view's offsets up to the next place where the shift changes.
    private func segmentEnd(from offset: Int) -> Int {
        if offset < HeaderPage.length { return HeaderPage.length }
        if offset < HealingLayout.logStart { return HealingLayout.logStart }
        return Int.max
    }

    var path: String { base.path }
    var writeRefusal: Int32? { base.writeRefusal }
    func linkCount() throws(KeychainError) -> Int { try base.linkCount() }
    func identity() throws(KeychainError) -> FileIdentity { try base.identity() }
    func sync() throws(KeychainError) { try base.sync() }
    func close() {}

    func size() throws(KeychainError) -> Int { Self.logical(try base.size(), pageCount: pageCount) }

    func truncate(to size: Int) throws(KeychainError) { try base.truncate(to: Self.physical(size, pageCount: pageCount)) }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        let count = min(buffer.count, segmentEnd(from: offset) - offset)
        return try base.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]), at: Self.physical(offset, pageCount: pageCount))
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        let count = min(bytes.count, segmentEnd(from: offset) - offset)
        return try base.write(UnsafeRawBufferPointer(rebasing: bytes[0..<count]), at: Self.physical(offset, pageCount: pageCount))
    }
}
