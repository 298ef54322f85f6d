#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension KeychainFileHandle {
    /// Reads exactly `count` bytes at `offset`, looping over short reads.
    ///
    /// - Throws: `KeychainError.corrupted` if the file ends first (the caller checked the size, so a short
    ///   file here means it changed underneath us); `.io` on a failed read.
    func readExactly(count: Int, at offset: Int) throws(KeychainError) -> [UInt8] {
        // The array is filled by the reads, not zeroed first (a large open reads every byte of the file): on a
        // failure, nothing uninitialized is kept — the array holds the bytes read so far, then is dropped.
        var failure: KeychainError? = nil
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            while initialized < count {
                let done = initialized
                do throws(KeychainError) {
                    let got = try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[done...]), at: offset + done)
                    guard got > 0 else {
                        failure = KeychainError.corrupted(offset: offset + done, reason: "file ended \(count - done) bytes early")
                        return
                    }
                    precondition(got <= count - done, "a read returned more bytes than it was given room for")
                    initialized += got
                } catch {
                    failure = error
                    return
                }
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Writes all of `bytes` at `offset`, looping over short writes.
    func writeAll(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) {
        var done = 0
        while done < bytes.count {
            let written = try write(UnsafeRawBufferPointer(rebasing: bytes[done...]), at: offset + done)
            guard written > 0 else {
                throw KeychainError.io(operation: "write (no progress)", errno: EIO, path: path)
            }
            done += written
        }
    }
}
