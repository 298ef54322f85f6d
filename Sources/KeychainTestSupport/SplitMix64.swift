/// SplitMix64: a small seeded generator for test data and fixtures. Predictable by design, so that every key,
/// salt and nonce a test or fixture draws is reproducible; never use it for anything that protects data.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
