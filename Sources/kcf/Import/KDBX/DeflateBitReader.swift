/// Reads the bits of a DEFLATE stream, least significant bit of each byte first (RFC 1951 §3.1.1). Reading
/// past the end of the input is an error, never a crash.
struct DeflateBitReader {
    private let input: [UInt8]
    /// The next byte to load into ``buffer``.
    private(set) var position: Int
    private var buffer: UInt64 = 0
    private var count = 0

    init(_ input: [UInt8], from start: Int) {
        self.input = input
        position = start
    }

    /// The next `width` bits (0…16) as a number, the first read the least significant.
    mutating func bits(_ width: Int) throws(DeflateError) -> Int {
        while count < width {
            guard position < input.count else { throw DeflateError("the compressed data ends in the middle of a block") }
            buffer |= UInt64(input[position]) << UInt64(count)
            position += 1
            count += 8
        }
        let value = Int(buffer & ((1 << UInt64(width)) - 1))
        buffer >>= UInt64(width)
        count -= width
        return value
    }

    /// Drops the bits left of the current byte (before a stored block's length).
    mutating func alignToByte() {
        let drop = count % 8
        buffer >>= UInt64(drop)
        count -= drop
    }

    /// The next whole byte, after ``alignToByte()``.
    mutating func byte() throws(DeflateError) -> UInt8 {
        UInt8(try bits(8))
    }

    /// Where the first byte not consumed is: the end of the DEFLATE data, once the final block is read.
    var byteOffset: Int {
        position - count / 8
    }
}
