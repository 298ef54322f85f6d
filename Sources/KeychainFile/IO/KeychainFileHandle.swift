#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file: positioned reads and writes, size, truncation and durability.
protocol KeychainFileHandle: AnyObject, Sendable {
    /// The path the file was opened with (for error messages).
    var path: String { get }
    /// Why the file was opened for reading only (the errno that refused opening it for writing), or `nil` if it
    /// is open for writing.
    var writeRefusal: Int32? { get }
    /// How many names (hard links) the file has.
    func linkCount() throws(KeychainError) -> Int
    /// Reads up to `buffer.count` bytes at `offset`; returns the number read (0 at end of file).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeychainError) -> Int
    /// Writes up to `bytes.count` bytes at `offset`; returns the number written (possibly fewer).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) -> Int
    /// The current size of the file.
    func size() throws(KeychainError) -> Int
    /// Sets the size of the file.
    func truncate(to size: Int) throws(KeychainError)
    /// Makes written data durable (fdatasync, or F_FULLFSYNC where available).
    func sync() throws(KeychainError)
    /// Which file this is (device and inode): compared with ``FileSystem/identity(of:)`` to notice that the
    /// path now names another file (a compaction by another process renamed a new file into place).
    func identity() throws(KeychainError) -> FileIdentity
    /// Closes the file; later calls fail.
    func close()
}
