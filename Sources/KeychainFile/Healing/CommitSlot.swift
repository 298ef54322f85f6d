import KeychainCrypto

/// One of the two commit slots of a format version 2 file (Docs/FormatVersion2.md §3): a seal, the parity of
/// the log's last, partial chunk, and the seal again, 8 KiB after the first copy so that one damaged 4 KiB
/// region cannot take both.
///
/// Writers use the slots alternately (`counter mod 2`), so that an append never writes over the slot that
/// describes the last acknowledged state; a reader takes the newest slot that reads (``newest(_:_:)``).
///
/// For example:
/// ```swift
/// let slot = CommitSlot(seal: seal, parity: parity)
/// let bytes = slot.encoded(headerKey: key)                          // 8,448 bytes
/// let (newest, older) = CommitSlot.newest(CommitSlot.decode(a, headerKey: key), CommitSlot.decode(b, headerKey: key))
/// ```
struct CommitSlot: Equatable, Sendable {
    let seal: Seal
    /// The last chunk's parity as stored: it only proposes repairs, which the tags confirm.
    let parity: ChunkParity
    /// Whether both seal copies read but differ: a write of the slot that did not complete, so it was never
    /// acknowledged, and its parity may be a mixture of that write's pages and the ones it was replacing.
    let isTorn: Bool

    init(seal: Seal, parity: ChunkParity, isTorn: Bool = false) {
        self.seal = seal
        self.parity = parity
        self.isTorn = isTorn
    }

    /// Seal, parity, seal.
    static let length = 2 * Seal.encodedLength + ChunkParity.parityLength

    /// The slot's bytes on disk.
    func encoded(headerKey: SymmetricKey) -> [UInt8] {
        let sealBytes = seal.encoded(headerKey: headerKey)
        return sealBytes + parity.bytes + sealBytes
    }

    /// The slot in `bytes` (``length`` bytes as read from the file), or `nil` if neither seal copy reads.
    /// When both read but differ — a slot write torn between them — the copy with the higher counter is the
    /// one that write put down, and the slot is ``isTorn``: its parity may hold pages of the write it was
    /// replacing, which are the parity of other bytes and would propose them as repairs.
    ///
    /// - Parameter epoch: When given, a seal copy of another epoch counts as unreadable (it is compared before
    ///   the copies are, so that a stale copy cannot hide a good one).
    static func decode(_ bytes: [UInt8], headerKey: SymmetricKey, epoch: UInt64? = nil) -> CommitSlot? {
        guard bytes.count == length else { return nil }
        func ofEpoch(_ seal: Seal?) -> Seal? { epoch == nil || seal?.epoch == epoch ? seal : nil }
        let first = ofEpoch(Seal.decode(bytes[0..<Seal.encodedLength], headerKey: headerKey))
        let second = ofEpoch(Seal.decode(bytes[(length - Seal.encodedLength)...], headerKey: headerKey))
        let chosen: Seal?
        switch (first, second) {
        case (let a?, let b?): chosen = a.counter >= b.counter ? a : b
        case (let a?, nil): chosen = a
        case (nil, let b?): chosen = b
        case (nil, nil): chosen = nil
        }
        guard let seal = chosen else { return nil }
        let parity = ChunkParity(storedBytes: Array(bytes[Seal.encodedLength..<(Seal.encodedLength + ChunkParity.parityLength)]))
        return CommitSlot(seal: seal, parity: parity, isTorn: first != nil && second != nil && first != second)
    }

    /// The newer and the older of two slots as read (either may be `nil`): the one with the higher counter
    /// first. Two readable slots of different epochs are not compared here: the caller checks each seal's epoch
    /// against the header's.
    static func newest(_ a: CommitSlot?, _ b: CommitSlot?) -> (newest: CommitSlot?, older: CommitSlot?) {
        switch (a, b) {
        case (let x?, let y?): return x.seal.counter >= y.seal.counter ? (x, y) : (y, x)
        case (let x?, nil): return (x, nil)
        case (nil, let y?): return (y, nil)
        case (nil, nil): return (nil, nil)
        }
    }
}
