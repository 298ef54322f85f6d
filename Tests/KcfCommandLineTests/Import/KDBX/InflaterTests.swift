import Foundation
import Testing
import KeychainTestSupport
@testable import kcf

/// The DEFLATE/gzip reader against streams made by Python's zlib (Fixtures/deflate, Scripts/make-kdbx-fixtures.py)
/// and against hostile streams written bit by bit.
@Suite("Inflater and GzipReader")
struct InflaterTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: RepositoryFiles.url("Fixtures/deflate/" + name)))
    }

    @Test("zlib's stored, fixed-Huffman, dynamic-Huffman and empty streams inflate to their originals",
          arguments: ["stored", "fixed", "dynamic", "empty"])
    func zlibStreams(name: String) throws {
        let original = try Self.fixture(name + ".bin")
        let inflated = try GzipReader.decompress(try Self.fixture(name + ".gz"), maximumOutput: 1 << 20)
        #expect(inflated == original)
        #expect(CRC32.checksum(original) == CRC32.checksum(inflated))
    }

    @Test("the output bound: 8 MiB of zeros (8 KiB compressed) is refused at 1 MiB, and read at 8 MiB")
    func outputBomb() throws {
        let bomb = try Self.fixture("bomb.gz")
        #expect(throws: DeflateError("the data inflates to more than 1048576 bytes, more than kcf reads")) {
            try GzipReader.decompress(bomb, maximumOutput: 1 << 20)
        }
        #expect(try GzipReader.decompress(bomb, maximumOutput: 8 << 20).count == 8 << 20)
    }

    @Test("every truncation of a dynamic stream is an error")
    func truncations() throws {
        let stream = try Self.fixture("dynamic.gz")
        for length in 0..<stream.count {
            #expect(throws: DeflateError.self, "cut at \(length)") { try GzipReader.decompress(Array(stream.prefix(length)), maximumOutput: 1 << 20) }
        }
    }

    /// A flipped bit in the gzip header's time, extra flags or OS byte changes nothing the reader checks; every
    /// other flip is an error (the CRC-32 catches what the decoder does not).
    @Test("every single-bit flip of a dynamic stream is an error or, in unchecked header bytes, the same data")
    func bitFlips() throws {
        let stream = try Self.fixture("dynamic.gz")
        let original = try Self.fixture("dynamic.bin")
        for index in 0..<stream.count {
            var flipped = stream
            flipped[index] ^= 1 << UInt8(index % 8)
            do throws(DeflateError) {
                let output = try GzipReader.decompress(flipped, maximumOutput: 1 << 20)
                #expect((4..<10).contains(index) && output == original, "flip at \(index) was read")
            } catch {}
        }
    }

    @Test("hostile streams: block type 3, stored length not its complement, back-reference before the start, over-subscribed and incomplete codes, bytes after the end")
    func hostile() throws {
        #expect(throws: DeflateError("a block has type 3, which DEFLATE does not have")) {
            try Inflater.inflate([0x07], maximumOutput: 100)
        }
        #expect(throws: DeflateError("a stored block's length does not match its complement")) {
            try Inflater.inflate([0x01, 0x05, 0x00, 0x00, 0x00], maximumOutput: 100)
        }
        // Fixed block: length symbol 257 (7-bit code 0000001), distance code 0 (distance 1) with nothing output yet.
        var farBack = BitWriter()
        farBack.write(1, 1); farBack.write(1, 2)
        farBack.writeCode(0b0000001, length: 7)
        farBack.writeCode(0, length: 5)
        #expect(throws: DeflateError("a back-reference reaches 1 bytes back, before the start of the data")) {
            try Inflater.inflate(farBack.bytes, maximumOutput: 100)
        }
        // Dynamic block whose code-length code gives 19 codes of one bit: over-subscribed.
        var overSubscribed = BitWriter()
        overSubscribed.write(1, 1); overSubscribed.write(2, 2)
        overSubscribed.write(0, 5); overSubscribed.write(0, 5); overSubscribed.write(15, 4)
        for _ in 0..<19 { overSubscribed.write(1, 3) }
        #expect(throws: DeflateError("a Huffman code has more codes than its lengths allow (over-subscribed)")) {
            try Inflater.inflate(overSubscribed.bytes, maximumOutput: 100)
        }
        // Dynamic block whose code-length code has one code of two bits: incomplete.
        var incomplete = BitWriter()
        incomplete.write(1, 1); incomplete.write(2, 2)
        incomplete.write(0, 5); incomplete.write(0, 5); incomplete.write(0, 4)
        incomplete.write(2, 3); incomplete.write(0, 3); incomplete.write(0, 3); incomplete.write(0, 3)
        #expect(throws: DeflateError("a dynamic block's code-length code is incomplete")) {
            try Inflater.inflate(incomplete.bytes, maximumOutput: 100)
        }
        // A dynamic block that repeats (code 16) before any length: code-length code with 16 and 0 at one bit each.
        var repeatFirst = BitWriter()
        repeatFirst.write(1, 1); repeatFirst.write(2, 2)
        repeatFirst.write(0, 5); repeatFirst.write(0, 5); repeatFirst.write(0, 4)
        repeatFirst.write(1, 3); repeatFirst.write(0, 3); repeatFirst.write(0, 3); repeatFirst.write(1, 3)  // 16: 1 bit, 0: 1 bit
        repeatFirst.writeCode(1, length: 1)  // symbol 16 (codes: 0 → symbol 0, 1 → symbol 16)
        repeatFirst.write(0, 2)
        #expect(throws: DeflateError("a dynamic block repeats a code length before the first one")) {
            try Inflater.inflate(repeatFirst.bytes, maximumOutput: 100)
        }
        var trailing = try Self.fixture("fixed.gz")
        trailing.append(0)
        #expect(throws: DeflateError("1 bytes follow the gzip data")) { try GzipReader.decompress(trailing, maximumOutput: 1 << 20) }
        var badCRC = try Self.fixture("fixed.gz")
        badCRC[badCRC.count - 8] ^= 1
        #expect(throws: DeflateError("the gzip data's CRC-32 does not match: the data is damaged")) {
            try GzipReader.decompress(badCRC, maximumOutput: 1 << 20)
        }
        var badSize = try Self.fixture("fixed.gz")
        badSize[badSize.count - 1] ^= 1
        #expect(throws: DeflateError("the gzip data's length (ISIZE) does not match")) {
            try GzipReader.decompress(badSize, maximumOutput: 1 << 20)
        }
    }

    @Test("random bytes after a valid block header never crash the decoder")
    func randomStreams() {
        var generator = SeededGenerator(seed: 33)
        for length in 1..<400 {
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            bytes[0] = (bytes[0] & 0xf8) | [0x05, 0x04, 0x02, 0x03][length % 4]
            _ = try? Inflater.inflate(bytes, maximumOutput: 1 << 16)
        }
    }
}

/// Writes bits least significant first, as DEFLATE packs them; Huffman codes most significant bit first.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var bitCount = 0

    mutating func write(_ value: Int, _ width: Int) {
        for bit in 0..<width { append((value >> bit) & 1) }
    }

    mutating func writeCode(_ code: Int, length: Int) {
        for bit in stride(from: length - 1, through: 0, by: -1) { append((code >> bit) & 1) }
    }

    private mutating func append(_ bit: Int) {
        if bitCount % 8 == 0 { bytes.append(0) }
        bytes[bytes.count - 1] |= UInt8(bit) << UInt8(bitCount % 8)
        bitCount += 1
    }
}

/// A small deterministic generator (SplitMix64) so that random sweeps repeat.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
