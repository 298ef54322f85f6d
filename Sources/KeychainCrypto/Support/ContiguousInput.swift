// Input adaptation: every public entry point accepts any sequence of bytes (`[UInt8]`, `ArraySlice`,
// Foundation's `Data`, `UnsafeRawBufferPointer`, a digest, …) and the cryptographic code below it works on
// one raw buffer. Types that store their bytes contiguously are used in place; only other sequences are
// copied, once.

/// Calls `body` with the bytes of `bytes` as one contiguous raw buffer.
///
/// Uses the sequence's own storage when it has one (arrays, slices, `Data`, buffer pointers), so no copy
/// is made; otherwise copies the elements into a temporary array.
@inlinable
func withContiguousBytes<Bytes: Sequence, Result, Failure: Error>(
    of bytes: Bytes, _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
) throws(Failure) -> Result where Bytes.Element == UInt8 {
    // `withContiguousStorageIfAvailable` is `rethrows`, which would widen the error to `any Error`;
    // carrying the outcome out as a typed `Swift.Result` keeps `Failure` precise.
    let inPlace: Swift.Result<Result, Failure>? = bytes.withContiguousStorageIfAvailable { storage in
        Swift.Result { () throws(Failure) -> Result in try body(UnsafeRawBufferPointer(storage)) }
    }
    if let inPlace {
        return try inPlace.get()
    }
    let copy = Array(bytes)
    let copied: Swift.Result<Result, Failure> = copy.withUnsafeBytes { buffer in
        Swift.Result { () throws(Failure) -> Result in try body(buffer) }
    }
    return try copied.get()
}

extension UnsafeRawPointer {
    /// Loads the big-endian `UInt32` that starts `offset` bytes from this pointer; no alignment needed.
    @inline(__always)
    func loadBigEndianUInt32(at offset: Int) -> UInt32 {
        UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// Loads the big-endian `UInt64` that starts `offset` bytes from this pointer; no alignment needed.
    @inline(__always)
    func loadBigEndianUInt64(at offset: Int) -> UInt64 {
        UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// Loads the little-endian `UInt64` that starts `offset` bytes from this pointer; no alignment needed.
    @inline(__always)
    func loadLittleEndianUInt64(at offset: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}

extension UnsafeMutableRawPointer {
    /// Stores `value` big-endian at `offset` bytes from this pointer; no alignment needed.
    @inline(__always)
    func storeBigEndian(_ value: UInt32, at offset: Int) {
        storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt32.self)
    }

    /// Stores `value` big-endian at `offset` bytes from this pointer; no alignment needed.
    @inline(__always)
    func storeBigEndian(_ value: UInt64, at offset: Int) {
        storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt64.self)
    }

    /// Stores `value` little-endian at `offset` bytes from this pointer; no alignment needed.
    @inline(__always)
    func storeLittleEndian(_ value: UInt64, at offset: Int) {
        storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
    }
}
