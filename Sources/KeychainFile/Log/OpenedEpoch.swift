@_spi(KeychainFileInternals) import KeychainCrypto

/// A file's header verified under a master key: the epoch's keys, the context and chain value its records
/// start from, and what the lock file acknowledged for this epoch (SPEC.md §9.1 step 4, §16.1).
///
/// Every way of reading a file starts here — an open, a reload after another process rewrote the file, a
/// recovering open and a salvage — so the order header → keys → MAC → context is written once.
struct OpenedEpoch {
    let header: FileHeader
    /// The header's length: where the first record starts.
    let headerLength: Int
    let masterKey: SymmetricKey
    let keys: EpochKeys
    let context: RecordContext
    /// The chain value the first record is chained to (C0, SPEC.md §6).
    let initialChain: [UInt8]
    /// The lock file's acknowledgement, if it authenticates for this file and epoch.
    let acknowledged: Acknowledgement?
    /// The header's first sector, as read: what shows another header written over it in place.
    let headerSeen: HeaderFingerprint

    /// Derives the epoch's keys from `masterKey` and verifies the header MAC.
    ///
    /// - Parameters:
    ///   - header: The parsed header.
    ///   - headerBytes: The header's bytes, MAC included.
    ///   - masterKey: The master key a key slot gave.
    ///   - acknowledgement: The lock file's acknowledgement block, if read.
    /// - Throws: `KeychainError.corrupted` if the MAC does not verify: the header was altered (or `masterKey` is
    ///   not this file's).
    init(header: FileHeader, headerBytes: [UInt8], masterKey: SymmetricKey, acknowledgement: [UInt8]?) throws(KeychainError) {
        let keys = try EpochKeys(masterKey: masterKey, fileID: header.fileID, epoch: header.epoch, epochSalt: header.epochSalt)
        guard FileHeader.verifyMAC(headerBytes, headerKey: keys.header) else {
            throw KeychainError.corrupted(offset: headerBytes.count - 32, reason: "header MAC does not verify (the header was altered)")
        }
        self.header = header
        headerLength = headerBytes.count
        self.masterKey = masterKey
        self.keys = keys
        context = RecordContext(fileID: header.fileID, epoch: header.epoch, recordKey: keys.record)
        initialChain = FileHeader.initialChainValue(of: headerBytes)
        headerSeen = HeaderFingerprint(reads: [(headerBytes, [])], at: [0])
        acknowledged = acknowledgement.flatMap {
            Acknowledgement.read($0, fileID: header.fileID, epoch: header.epoch, headerKey: keys.header)
        }
    }

    /// The sequence number whose chain value a replay must report to check `pin` (SPEC.md §15.4): `nil` when
    /// there is no pin or it names another epoch.
    func watchedSequence(for pin: Head?) -> UInt64? {
        pin.flatMap { $0.epoch == header.epoch ? $0.sequence : nil }
    }

    /// The state of a log whose replay of this epoch ended at `end` and `head`.
    func fileState(file: any KeychainFileHandle, end: Int, head: Head, tornTail: TornTail?, boxCount: UInt64) throws(KeychainError) -> RecordLog.FileState {
        RecordLog.FileState(
            file: file, identity: try file.identity(), header: header, headerLength: headerLength, context: context,
            masterKey: masterKey, headerKey: keys.header, headerSeen: headerSeen, end: end, head: head, tornTail: tornTail, boxesSealed: boxCount)
    }
}
