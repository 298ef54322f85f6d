/// SHA-512 (FIPS 180-4): a 64-byte digest of any amount of data.
///
/// Hash in one call with ``hash(data:)``, or incrementally with ``update(data:)`` and ``finalize()``; both give
/// the same digest for the same bytes however they are split. KeePass's KDBX 4 format derives its HMAC keys and
/// its inner stream key with it.
///
/// For example:
/// ```swift
/// let digest = SHA512.hash(data: Array("abc".utf8))
/// print(digest.hexString)  // ddaf35a193617aba…a54ca49f
/// ```
public struct SHA512: HashFunction {
    /// SHA-512 consumes 128-byte blocks.
    public static let blockByteCount = 128
    /// A SHA-512 digest is 64 bytes long.
    public static let byteCount = 64

    /// The chaining value after the whole blocks hashed so far.
    var state: State = .initial
    /// Bytes waiting for a whole block (fewer than 128).
    var pending: [UInt8] = []
    /// How many bytes were hashed in all.
    var byteCountSoFar: UInt64 = 0

    /// Creates a hasher in the initial state of FIPS 180-4 §5.3.5.
    public init() {}

    /// Adds the bytes in `bufferPointer` to the data being hashed.
    ///
    /// - Parameter bufferPointer: The bytes to add.
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        byteCountSoFar &+= UInt64(bufferPointer.count)
        var offset = 0
        if !pending.isEmpty {
            let taken = min(Self.blockByteCount - pending.count, bufferPointer.count)
            pending.append(contentsOf: bufferPointer[0..<taken])
            offset = taken
            guard pending.count == Self.blockByteCount else { return }
            pending.withUnsafeBytes { state.compress(blocks: $0.baseAddress!, count: 1) }
            secureWipe(&pending)
        }
        let whole = (bufferPointer.count - offset) / Self.blockByteCount
        if whole > 0 {
            state.compress(blocks: bufferPointer.baseAddress! + offset, count: whole)
            offset += whole * Self.blockByteCount
        }
        pending.append(contentsOf: bufferPointer[offset...])
    }

    /// Returns the digest of the data added so far; the hasher itself is unchanged.
    public func finalize() -> SHA512Digest {
        var last = pending
        last.append(0x80)
        while last.count % Self.blockByteCount != Self.blockByteCount - 16 { last.append(0) }
        let bits = byteCountSoFar << 3
        last.append(contentsOf: repeatElement(0, count: 8))
        for shift in stride(from: 56, through: 0, by: -8) { last.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        // The length is a 128-bit count of bits: its top word carries the three bits shifted out above.
        last[last.count - 9] = UInt8(truncatingIfNeeded: byteCountSoFar >> 61)
        var final = state
        last.withUnsafeBytes { final.compress(blocks: $0.baseAddress!, count: $0.count / Self.blockByteCount) }
        secureWipe(&last)
        return SHA512Digest(state: final)
    }

    private func secureWipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { secureZero(base, count: $0.count) } }
        bytes.removeAll(keepingCapacity: true)
    }
}
