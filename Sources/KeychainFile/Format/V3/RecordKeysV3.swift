@_spi(KeychainFileInternals) import KeychainCrypto

/// What sealing and reading format version 3 records takes from the log side (Docs/FormatVersion3.md §2.5.1): the
/// file id, the epoch, the epoch's **chain key** `K_chain` (the record chain's HMAC-SHA256 key) and the **heads key**
/// (the AES-256-GCM key of every commit's heads segment). Both keys derive from the log key `K_log` in the header
/// (§2.4), which this codec does not read: it takes them as they are given. Every holder, full or scoped, has them.
/// With them, the header's chain start entries (§2.6): where each group's chain in the file began.
///
/// ```swift
/// let keys = try RecordKeysV3(fileID: fileID, epoch: 3, chainKey: kChain, headsKey: kHeads)
/// ```
struct RecordKeysV3: Sendable {
    let fileID: [UInt8]
    let epoch: UInt64
    let chainKey: SymmetricKey
    let headsKey: SymmetricKey
    /// The groups whose chains began before `epoch` (the header's chain start entries); every other group's begins in it.
    let chainStarts: [ChainStartV3]
    /// For an open against a pinned head (SPEC.md §37.5): by key id, the group sequence of the
    /// pinned page whose tag the replay remembers; empty otherwise.
    var watchedPages: [UInt8: UInt64] = [:]

    /// - Throws: `.invalidParameter` for a file id other than 16 bytes or a key other than 32.
    init(fileID: [UInt8], epoch: UInt64, chainKey: SymmetricKey, headsKey: SymmetricKey, chainStarts: [ChainStartV3] = []) throws(KeychainError) {
        guard fileID.count == 16 else { throw .invalidParameter("a file id is 16 bytes, not \(fileID.count)") }
        guard chainKey.bitCount == 256, headsKey.bitCount == 256 else { throw .invalidParameter("the chain and heads keys are 32 bytes each") }
        self.fileID = fileID
        self.epoch = epoch
        self.chainKey = chainKey
        self.headsKey = headsKey
        self.chainStarts = chainStarts
    }

    /// The epoch in which group `keyID`'s chain in the file began: page 1 of it follows that epoch's start value.
    func startEpoch(of keyID: UInt8) -> UInt64 {
        chainStarts.first { $0.keyID == keyID }?.startEpoch ?? epoch
    }
}
