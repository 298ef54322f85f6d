import KeychainTestSupport

/// The fixtures' seeded generator (SplitMix64): every key, salt and nonce in a fixture is reproducible.
public typealias FixtureRandom = SplitMix64
