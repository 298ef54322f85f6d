#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Argon2's memory matrix B (RFC 9106 §3.2): `blockCount` blocks of 1 KiB, each 128 words in host byte
/// order, lane after lane. The one large allocation of a derivation, made here and nowhere else.
///
/// The words are converted from and to little-endian bytes only where the RFC turns bytes into blocks (the
/// first two blocks of each lane) and blocks into bytes (the final block); in between they are numbers.
///
/// `@unchecked Sendable`: the lanes of one slice are filled on several threads at once, each writing only
/// the blocks of its own segment and reading only blocks that no thread writes during that slice (RFC 9106
/// §3.4.2 excludes the current slice of other lanes). The slices are separated by the join of
/// `concurrentPerform`, so every read sees the finished write.
struct Argon2Memory: @unchecked Sendable {
    /// The number of 64-bit words in a block.
    static let wordsPerBlock = 128

    /// The first word of block 0.
    let words: UnsafeMutablePointer<UInt64>
    /// The number of blocks, m' in RFC 9106.
    let blockCount: Int

    /// Allocates `blockCount` blocks, uninitialised: Argon2 writes every block in the first pass before any
    /// block reads it.
    ///
    /// `posix_memalign` rather than `UnsafeMutablePointer.allocate`, so that a request the system refuses
    /// is an error for the caller instead of a trap.
    ///
    /// - Throws: ``CryptoKitError/invalidParameter`` if the size overflows or the memory cannot be had.
    init(blockCount: Int) throws(CryptoKitError) {
        let (byteCount, overflow) = blockCount.multipliedReportingOverflow(by: Self.wordsPerBlock * 8)
        guard blockCount > 0, !overflow else { throw .invalidParameter }
        var raw: UnsafeMutableRawPointer? = nil
        guard posix_memalign(&raw, 64, byteCount) == 0, let raw else { throw .invalidParameter }
        words = raw.bindMemory(to: UInt64.self, capacity: blockCount * Self.wordsPerBlock)
        self.blockCount = blockCount
    }

    /// The first word of block `index` (lane `l`, column `c` is block `l · laneLength + c`).
    @inline(__always)
    func block(_ index: Int) -> UnsafeMutablePointer<UInt64> {
        words + index &* Self.wordsPerBlock
    }

    /// Overwrites every block with zeros (they hold values derived from the password) and frees them. Call
    /// once; the memory must not be used afterwards.
    func deallocate() {
        secureZero(words, count: blockCount * Self.wordsPerBlock * 8)
        free(words)
    }
}
