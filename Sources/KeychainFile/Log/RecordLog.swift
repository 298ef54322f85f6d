import KeychainCrypto

/// The keychain file on disk: the header, the verified record log, and appending to it (SPEC.md §9, §10).
///
/// Not thread-safe on its own: the `Keychain` that owns it serialises every call.
final class RecordLog {
    let path: String
    private let fileSystem: any FileSystem
    private var file: any KeychainFileHandle
    private(set) var header: FileHeader
    let context: RecordContext
    /// The end of the last verified record; appends start here.
    private(set) var end: Int
    private(set) var head: Head
    private(set) var tornTail: TornTail?
    /// Boxes sealed under the current record key (SPEC.md §10: at most 2³¹).
    private(set) var boxesSealed: UInt64

    private init(
        path: String, fileSystem: any FileSystem, file: any KeychainFileHandle, header: FileHeader,
        context: RecordContext, end: Int, head: Head, tornTail: TornTail?, boxesSealed: UInt64
    ) {
        self.path = path
        self.fileSystem = fileSystem
        self.file = file
        self.header = header
        self.context = context
        self.end = end
        self.head = head
        self.tornTail = tornTail
        self.boxesSealed = boxesSealed
    }

    deinit { file.close() }

    // MARK: Creating

    /// Creates a new keychain file holding only a header (SPEC.md §10): written under a temporary name in the
    /// same directory, made durable, then linked into place so that an existing file is never replaced.
    static func create<Generator: RandomNumberGenerator>(
        at path: String, credentials: [Credential], iterations: PasswordIterations, fileSystem: any FileSystem,
        using generator: inout Generator
    ) throws(KeychainError) -> (RecordLog, ItemIndex) {
        guard !credentials.isEmpty else { throw .invalidParameter("a keychain needs at least one credential") }
        guard credentials.count <= Format.maximumSlots else { throw .invalidParameter("at most 16 credentials (key slots)") }
        let passwordSlots = credentials.filter { $0.slotType == .password }.count
        guard UInt64(passwordSlots) * UInt64(iterations.count) <= Format.maximumTotalIterations else {
            throw .invalidParameter("\(passwordSlots) password slots of \(iterations.count) iterations exceed 20,000,000 iterations in total")
        }
        for credential in credentials { try credential.validate() }
        guard !fileSystem.exists(path) else { throw .invalidParameter("a file already exists at \(path)") }
        let masterKey = SymmetricKey(size: .bits256, using: &generator)
        let fileID = randomBytes(16, using: &generator)
        let epochSalt = randomBytes(32, using: &generator)
        var slots: [KeySlot] = []
        for credential in credentials {
            slots.append(try KeySlot.make(for: credential, masterKey: masterKey, fileID: fileID, iterations: iterations, using: &generator))
        }
        let header = FileHeader(fileID: fileID, epoch: 1, epochSalt: epochSalt, slots: slots)
        let keys = try EpochKeys(masterKey: masterKey, fileID: fileID, epoch: 1, epochSalt: epochSalt)
        let headerBytes = header.encode(headerKey: keys.header)

        let temporary = path + ".tmp-" + randomBytes(6, using: &generator).map { String($0, radix: 16) }.joined()
        let staging = try fileSystem.createExclusive(temporary)
        do throws(KeychainError) {
            try headerBytes.withBytes { (bytes) throws(KeychainError) in try staging.writeAll(bytes, at: 0) }
            try staging.sync()
            try fileSystem.rename(temporary, to: path)
            try fileSystem.syncDirectory(containing: path)
        } catch {
            staging.close()
            try? fileSystem.removeIfPresent(temporary)
            throw error
        }
        let context = RecordContext(fileID: fileID, epoch: 1, recordKey: keys.record)
        let log = RecordLog(
            path: path, fileSystem: fileSystem, file: staging, header: header, context: context, end: headerBytes.count,
            head: Head(sequence: 0, chainValue: FileHeader.initialChainValue(of: headerBytes)), tornTail: nil,
            boxesSealed: 0)
        return (log, ItemIndex())
    }

    // MARK: Opening

    /// Opens, unlocks and replays a keychain file (SPEC.md §9).
    static func open(
        at path: String, credential: Credential, fileSystem: any FileSystem
    ) throws(KeychainError) -> (RecordLog, ItemIndex) {
        try credential.validate()
        let file = try fileSystem.openExisting(path)
        do throws(KeychainError) {
            let size = try file.size()
            guard size >= FileHeader.Prefix.size else { throw KeychainError.notAKeychain }
            let prefix = try FileHeader.Prefix(try file.readExactly(count: FileHeader.Prefix.size, at: 0))
            guard size >= prefix.headerLength else {
                throw KeychainError.corrupted(offset: 0, reason: "truncated header: the file has \(size) of \(prefix.headerLength) header bytes")
            }
            let headerBytes = try file.readExactly(count: prefix.headerLength, at: 0)
            let header = try FileHeader.parse(headerBytes)

            var masterKey: SymmetricKey? = nil
            for slot in header.slots where slot.type == credential.slotType {
                if let key = try slot.unwrap(with: credential, fileID: header.fileID) {
                    masterKey = key
                    break
                }
            }
            guard let masterKey else { throw KeychainError.wrongCredentials }
            let keys = try EpochKeys(masterKey: masterKey, fileID: header.fileID, epoch: header.epoch, epochSalt: header.epochSalt)
            guard FileHeader.verifyMAC(headerBytes, headerKey: keys.header) else {
                throw KeychainError.corrupted(offset: headerBytes.count - 32, reason: "header MAC does not verify (the header was altered)")
            }
            let context = RecordContext(fileID: header.fileID, epoch: header.epoch, recordKey: keys.record)
            var replay = Replay(
                file: file, fileSize: size, start: headerBytes.count, context: context,
                initialChain: FileHeader.initialChainValue(of: headerBytes))
            try replay.run()
            let log = RecordLog(
                path: path, fileSystem: fileSystem, file: file, header: header, context: context, end: replay.end,
                head: replay.head, tornTail: replay.tornTail, boxesSealed: replay.boxCount)
            return (log, replay.index)
        } catch {
            file.close()
            throw error
        }
    }

    // MARK: Appending

    /// Seals `entries` as the next record, appends it durably, and returns what was written. The caller
    /// validates the entries against its index first and applies them after this returns.
    func append<Generator: RandomNumberGenerator>(
        _ entries: [LogEntry], using generator: inout Generator
    ) throws(KeychainError) -> RecordEncoder.Encoded {
        let boxes = entries.reduce(UInt64(0)) { total, entry in
            if case .put = entry { return total + 2 } else { return total + 1 }
        }
        guard boxesSealed + boxes <= Format.maximumBoxesPerEpoch else {
            throw .limitReached("2³¹ boxes have been sealed under this file's record key; compact the keychain")
        }
        let encoded = try RecordEncoder.encode(
            entries, sequence: head.sequence + 1, previousChain: head.chainValue, context: context, using: &generator)
        // A torn tail from a crash is cut off before the new record is written over it.
        if try file.size() != end {
            try file.truncate(to: end)
        }
        do throws(KeychainError) {
            try encoded.frame.withBytes { (bytes) throws(KeychainError) in try file.writeAll(bytes, at: end) }
            try file.sync()
        } catch {
            // Leave the file as it was: the partial record is cut off (best effort; if this fails too, the
            // next open drops it as a torn tail).
            try? file.truncate(to: end)
            throw error
        }
        end += encoded.frame.count
        head = Head(sequence: head.sequence + 1, chainValue: encoded.chainValue)
        boxesSealed += UInt64(encoded.boxCount)
        tornTail = nil
        return encoded
    }

    /// Verifies and decrypts a stored secret.
    func openSecret(_ secret: SealedSecret, itemID: ItemID) throws(KeychainError) -> [UInt8] {
        let aad = BoxAAD.make(
            fileID: context.fileID, epoch: context.epoch, sequence: secret.sequence, kind: secret.kind,
            entryCount: secret.entryCount, entryIndex: secret.entryIndex, role: .secret, itemID: itemID,
            previousChain: secret.previousChain)
        do {
            let box = try AES.GCM.SealedBox(combined: secret.box)
            return try AES.GCM.open(box, using: context.recordKey, authenticating: aad)
        } catch {
            throw .corrupted(offset: 0, reason: "a secret held in memory no longer authenticates: \(error)")
        }
    }
}
