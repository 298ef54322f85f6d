/// Eight 16-byte blocks stored inline.
struct Batch {
    var b0, b1, b2, b3, b4, b5, b6, b7: SIMD16<UInt8>

    init(repeating block: SIMD16<UInt8>) {
        (b0, b1, b2, b3, b4, b5, b6, b7) = (block, block, block, block, block, block, block, block)
    }
}
