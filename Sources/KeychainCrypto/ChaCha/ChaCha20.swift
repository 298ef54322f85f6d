/// The ChaCha20 stream cipher of RFC 8439 §2.4: a 256-bit key, a 96-bit nonce and a 32-bit block counter.
///
/// ChaCha20 alone is not authenticated: use it to read formats that need it (KeePass's KDBX 4 payload and its
/// protected values) behind a MAC checked first. The value keeps its place in the key stream, so successive
/// calls to ``apply(to:)`` continue where the last one stopped, as a stream does.
///
/// For example:
/// ```swift
/// var cipher = try ChaCha20(key: key, nonce: nonce)   // 32 and 12 bytes
/// var bytes = Array("attack at dawn".utf8)
/// try cipher.apply(to: &bytes)                          // encrypts; the same call with a new cipher decrypts
/// ```
public struct ChaCha20: Sendable {
    /// The key is 32 bytes long.
    public static let keyByteCount = 32
    /// The nonce is 12 bytes long.
    public static let nonceByteCount = 12
    /// A block of key stream is 64 bytes long.
    public static let blockByteCount = 64

    private var key: [UInt32]
    private var nonce: [UInt32]
    private var counter: UInt32
    /// Whether the counter went past its last value: no more key stream can be produced.
    private var exhausted = false
    private var buffer: [UInt8] = []
    private var used = 0

    /// A cipher at block `counter` of the key stream of `key` and `nonce`.
    ///
    /// - Parameters:
    ///   - key: 32 bytes.
    ///   - nonce: 12 bytes, never reused with `key`.
    ///   - counter: The first block's counter (0 for KeePass, 1 for RFC 8439's AEAD).
    /// - Throws: ``CryptoKitError/incorrectKeySize`` for another key length;
    ///   ``CryptoKitError/incorrectParameterSize`` for another nonce length.
    public init<Key: Sequence, Nonce: Sequence>(key: Key, nonce: Nonce, counter: UInt32 = 0) throws(CryptoKitError)
    where Key.Element == UInt8, Nonce.Element == UInt8 {
        let keyBytes = Array(key), nonceBytes = Array(nonce)
        guard keyBytes.count == Self.keyByteCount else { throw .incorrectKeySize }
        guard nonceBytes.count == Self.nonceByteCount else { throw .incorrectParameterSize }
        self.key = Self.littleEndianWords(keyBytes)
        self.nonce = Self.littleEndianWords(nonceBytes)
        self.counter = counter
    }

    /// XORs the next `bytes.count` bytes of key stream into `bytes`: encrypts or decrypts them.
    ///
    /// - Parameter bytes: The bytes to transform, in place.
    /// - Throws: ``CryptoKitError/invalidParameter`` when the 32-bit block counter would wrap (after 256 GiB);
    ///   `bytes` is then unchanged from where the stream ran out.
    public mutating func apply(to bytes: inout [UInt8]) throws(CryptoKitError) {
        for index in bytes.indices {
            if used == buffer.count {
                guard !exhausted else { throw .invalidParameter }
                buffer = Self.block(key: key, counter: counter, nonce: nonce)
                used = 0
                if counter == UInt32.max { exhausted = true } else { counter += 1 }
            }
            bytes[index] ^= buffer[used]
            used += 1
        }
    }

    /// The 64-byte block of key stream for `counter` (RFC 8439 §2.3).
    ///
    /// - Parameters:
    ///   - key: 32 bytes.
    ///   - counter: The block counter.
    ///   - nonce: 12 bytes.
    /// - Returns: The serialized block.
    /// - Throws: ``CryptoKitError/incorrectKeySize`` or ``CryptoKitError/incorrectParameterSize`` for other lengths.
    public static func block<Key: Sequence, Nonce: Sequence>(key: Key, counter: UInt32, nonce: Nonce) throws(CryptoKitError) -> [UInt8]
    where Key.Element == UInt8, Nonce.Element == UInt8 {
        let cipher = try ChaCha20(key: key, nonce: nonce, counter: counter)
        return block(key: cipher.key, counter: counter, nonce: cipher.nonce)
    }

    private static func block(key: [UInt32], counter: UInt32, nonce: [UInt32]) -> [UInt8] {
        var state: [UInt32] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574] + key + [counter] + nonce
        let initial = state
        for _ in 0..<10 {
            quarterRound(&state, 0, 4, 8, 12)
            quarterRound(&state, 1, 5, 9, 13)
            quarterRound(&state, 2, 6, 10, 14)
            quarterRound(&state, 3, 7, 11, 15)
            quarterRound(&state, 0, 5, 10, 15)
            quarterRound(&state, 1, 6, 11, 12)
            quarterRound(&state, 2, 7, 8, 13)
            quarterRound(&state, 3, 4, 9, 14)
        }
        var output: [UInt8] = []
        output.reserveCapacity(blockByteCount)
        for index in 0..<16 {
            let word = state[index] &+ initial[index]
            for shift in stride(from: 0, through: 24, by: 8) { output.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
        }
        return output
    }

    /// The quarter round of RFC 8439 §2.2 on four words of the state.
    private static func quarterRound(_ state: inout [UInt32], _ a: Int, _ b: Int, _ c: Int, _ d: Int) {
        state[a] &+= state[b]; state[d] ^= state[a]; state[d] = rotate(state[d], 16)
        state[c] &+= state[d]; state[b] ^= state[c]; state[b] = rotate(state[b], 12)
        state[a] &+= state[b]; state[d] ^= state[a]; state[d] = rotate(state[d], 8)
        state[c] &+= state[d]; state[b] ^= state[c]; state[b] = rotate(state[b], 7)
    }

    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
        (value << count) | (value >> (32 - count))
    }

    private static func littleEndianWords(_ bytes: [UInt8]) -> [UInt32] {
        stride(from: 0, to: bytes.count, by: 4).map { (offset: Int) -> UInt32 in
            var word: UInt32 = 0
            for index in (0..<4).reversed() { word = word << 8 | UInt32(bytes[offset + index]) }
            return word
        }
    }
}
