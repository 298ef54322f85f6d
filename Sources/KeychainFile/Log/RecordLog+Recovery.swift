#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import KeychainCrypto

// Reading a damaged file (SPEC.md §17): the recovering open, salvage and the checks before a repair.
extension RecordLog {
    /// Opens a keychain file for reading whatever still authenticates (SPEC.md §17): the records as a normal open
    /// reads them when nothing is damaged, otherwise every item whose boxes authenticate, with what could not be
    /// read. The log never changes its view and writes nothing.
    static func openRecovering(
        at path: String, credential: Credential, acknowledgement: [UInt8]?, pin: Head?, fileSystem: any FileSystem
    ) throws(KeychainError) -> (RecordLog, ItemIndex, [Damage]) {
        try credential.validate()
        let file = try fileSystem.openExisting(path)
        do throws(KeychainError) {
            let (header, headerBytes, size) = try readHeader(file)
            guard let masterKey = try unlock(header, with: credential) else { throw KeychainError.wrongCredentials }
            let (state, index, damage) = try recover(
                file: file, epoch: try OpenedEpoch(header: header, headerBytes: headerBytes, masterKey: masterKey, acknowledgement: acknowledgement),
                size: size, pin: pin)
            let log = RecordLog(path: path, fileSystem: fileSystem, credential: credential, state: state)
            log.isRecoveryView = true
            return (log, index, damage)
        } catch {
            file.close()
            throw error
        }
    }

    /// The verified header's file read as far as it still authenticates: a normal replay when it succeeds
    /// without a tail that may hold acknowledged data, the ``RecoveringReader`` otherwise.
    private static func recover(
        file: any KeychainFileHandle, epoch: OpenedEpoch, size: Int, pin: Head? = nil
    ) throws(KeychainError) -> (FileState, ItemIndex, [Damage]) {
        if let loaded = try? load(file: file, epoch: epoch, size: size, pin: pin), loaded.state.tornTail?.mayHoldAcknowledgedData != true {
            // Nothing damaged: at most a known crash remnant, reported as the torn tail.
            return (loaded.state, loaded.index, [])
        }
        var reader = RecoveringReader(
            bytes: try file.readExactly(count: size, at: 0), headerLength: epoch.headerLength, context: epoch.context,
            initialChain: epoch.initialChain, acknowledged: epoch.acknowledged, watching: epoch.watchedSequence(for: pin))
        reader.run()
        if let acknowledged = epoch.acknowledged, acknowledged.end > size {
            reader.noteMissing(from: size, upTo: acknowledged.end)
        }
        // A pin is checked against the records that authenticated (SPEC.md §15.4): damage cannot be told from a
        // rollback, so a file whose authentic records do not reach the pinned one is refused.
        if let pin { try checkContains(pin, epoch: epoch.header.epoch, head: reader.head, chainAtPin: reader.watchedChain) }
        let state = try epoch.fileState(file: file, end: size, head: reader.head, tornTail: nil, boxCount: reader.boxCount)
        return (state, reader.index, reader.damage)
    }

    /// Throws unless the file at `path` may be rewritten in place by a repair, as any write: it opens for
    /// writing, has one name, and `credential` opens its header (checked before anything is copied or written).
    static func checkRepairable(at path: String, credential: Credential, fileSystem: any FileSystem) throws(KeychainError) {
        try credential.validate()
        let file = try fileSystem.openRepairable(path)
        defer { file.close() }
        let (header, _, _) = try readHeader(file)
        guard try unlock(header, with: credential) != nil else { throw .wrongCredentials }
    }

    /// Writes to `destination` a keychain holding every item of `path` whose boxes still authenticate, and says
    /// what could not be read (SPEC.md §17). The damaged file is not changed.
    ///
    /// - Parameter replacing: Whether `destination` is `path` itself, renamed over (a repair, under the exclusive
    ///   lock), rather than a new file linked into place.
    /// - Returns: The report, and the acknowledgement of the new file (SPEC.md §16.1).
    static func salvage<Generator: RandomNumberGenerator>(
        from path: String, credential: Credential, to destination: String, replacing: Bool = false, acknowledgement: [UInt8]?,
        fileSystem: any FileSystem, using generator: inout Generator
    ) throws(KeychainError) -> (report: SalvageReport, acknowledgement: [UInt8]) {
        try credential.validate()
        let file = try fileSystem.openExisting(path)
        defer { file.close() }
        let (header, headerBytes, size) = try readHeader(file)
        guard let masterKey = try unlock(header, with: credential) else { throw KeychainError.wrongCredentials }
        guard header.epoch < UInt64.max else { throw .limitReached("the epoch counter is exhausted") }
        let (state, index, damage) = try recover(
            file: file, epoch: try OpenedEpoch(header: header, headerBytes: headerBytes, masterKey: masterKey, acknowledgement: acknowledgement),
            size: size)
        let order = index.positionsInAddedOrder()
        let context = state.context
        let written = try writeFile(
            at: destination, replacing: replacing, fileID: header.fileID, epoch: header.epoch + 1, slots: header.slots,
            masterKey: masterKey, itemCount: order.count, item: { index.item(atPosition: Int(order[$0])) },
            decryptSecret: { (item) throws(KeychainError) in try decryptSecret(item.secret, context: context) },
            fileSystem: fileSystem, using: &generator)
        written.state.file.close()
        let newAcknowledgement = Acknowledgement(fileID: header.fileID, head: written.state.head, end: written.state.end)
            .encode(headerKey: written.state.headerKey)
        let dropped = damage.reduce(0) { total, damage in
            switch damage.loss {
            case .region(let count), .crashRemnant(let count): return total + count
            default: return total
            }
        }
        let report = SalvageReport(
            itemCount: order.count, recordsKept: state.head.sequence, keptHead: state.head, damages: damage,
            droppedByteCount: dropped, tornTail: state.tornTail, newHead: written.state.head)
        return (report, newAcknowledgement)
    }
}
