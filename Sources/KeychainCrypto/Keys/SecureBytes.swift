/// Heap storage for secret bytes: written once when created, read-only afterwards, zeroed on deinit.
///
/// It also caches the expanded AES-GCM key derived from the bytes, so that sealing many messages with one
/// `SymmetricKey` expands it once; the cache is released (and zeroes itself) with the storage.
///
/// `@unchecked Sendable` is sound because the buffer is fully written inside `init` and never mutated
/// afterwards (only read through `withUnsafeBytes`), the cache is only read and written under `cacheLock`,
/// and `deinit` runs once no thread holds a reference.
final class SecureBytes: @unchecked Sendable {
    private let buffer: UnsafeMutableRawBufferPointer
    private let cacheLock = Lock()
    private var gcmContextCache: AESGCMContext?

    /// The number of bytes held.
    var count: Int { buffer.count }

    /// Allocates `count` bytes, zero-filled, then lets `body` write them.
    init(count: Int, initializingWith body: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        // A zero-byte key still gets a distinct 1-byte allocation, so `baseAddress` is never nil.
        let allocation = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        allocation.initializeMemory(as: UInt8.self, repeating: 0)
        buffer = UnsafeMutableRawBufferPointer(rebasing: allocation[0..<count])
        do {
            try body(buffer)
        } catch {
            secureZero(allocation.baseAddress!, count: allocation.count)
            allocation.deallocate()
            throw error
        }
    }

    deinit {
        secureZero(buffer.baseAddress!, count: max(buffer.count, 1))
        buffer.baseAddress!.deallocate()
    }

    func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(buffer))
    }

    /// The AES-GCM context for these bytes, expanded on first use and kept for later calls.
    ///
    /// - Throws: `CryptoKitError.incorrectKeySize` unless the key is 16, 24 or 32 bytes.
    func gcmContext() throws(CryptoKitError) -> AESGCMContext {
        let cached: AESGCMContext? = cacheLock.withLock { gcmContextCache }
        if let cached { return cached }
        let context = try AESGCMContext(key: UnsafeRawBufferPointer(buffer))
        // Two threads may both expand the key; they produce equal contexts and the first one stored wins.
        return cacheLock.withLock {
            if let existing = gcmContextCache { return existing }
            gcmContextCache = context
            return context
        }
    }
}
