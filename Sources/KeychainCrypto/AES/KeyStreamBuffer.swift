/// Sixteen blocks of key stream stored inline: a batch, and the one after it when the cipher made two.
struct KeyStreamBuffer {
    var first = Batch(repeating: .zero)
    var second = Batch(repeating: .zero)
}
