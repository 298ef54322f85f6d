#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import KeychainCrypto

// Rewriting the file (SPEC.md §15): compaction and every credential change, and creating a new file.
extension RecordLog {
    /// Replaces the file with a new one in the next epoch holding only `items` (in their order), with `slots`
    /// wrapping `newMasterKey`: compaction, and every credential change. Written under a temporary name,
    /// made durable, renamed over the file and the directory synced — so a crash leaves the old file or the
    /// new one. The caller holds the lock file exclusively and has caught up.
    ///
    /// - Parameters:
    ///   - index: The caller's index, whose live items the new file holds, in the order they were added; its
    ///     items get the secrets sealed in the new file, read back from it, as soon as the new file is in place
    ///     — also when syncing the directory afterwards fails and this throws; if reading them back fails, the
    ///     next catch-up reloads the new file instead. (Read in place and changed in place rather than copied or
    ///     rebuilt, so that a rewrite holds no second copy of every item, nor every new secret box.)
    func rewrite<Generator: RandomNumberGenerator>(
        slots: [KeySlot], masterKey newMasterKey: SymmetricKey, index: inout ItemIndex,
        using generator: inout Generator
    ) throws(KeychainError) {
        try checkWritable()
        guard header.epoch < UInt64.max else { throw .limitReached("the epoch counter is exhausted") }
        // A rewrite keeps only the verified records: it must not drop a tail that may hold acknowledged ones.
        if try file.size() != end { try checkTailMayBeDropped() }
        let oldContext = context
        let order = index.positionsInAddedOrder()
        var placed: WrittenSecrets? = nil
        defer {
            // The new file holds the same items with the same attributes, in the same order: only where their
            // secrets are sealed changed. Nothing moved the items in between.
            if let placed {
                do throws(KeychainError) {
                    try placed.forEach(readingFrom: file, itemID: { index.item(atPosition: Int(order[$0])).id }) { rank, secret in
                        index.replaceSecret(atPosition: Int(order[rank]), with: secret)
                    }
                } catch {
                    // Some items may still name boxes of the old file, which is gone: the next call reloads the
                    // new file (as if another process had rewritten it) before it reads anything. No read may
                    // skip that refresh: a secret is decrypted without its tag being checked, so an old box
                    // would decrypt under the new key to garbage, not to an error.
                    mustReload = true
                }
            }
        }
        _ = try Self.writeFile(
            at: path, replacing: true, fileID: header.fileID, epoch: header.epoch + 1, slots: slots,
            masterKey: newMasterKey, itemCount: order.count, item: { index.item(atPosition: Int(order[$0])) },
            decryptSecret: { (item) throws(KeychainError) in try Self.decryptSecret(item.secret, context: oldContext) },
            fileSystem: fileSystem, using: &generator,
            afterRename: { (written) in
                self.adopt(written.state)
                placed = written.secrets
            })
    }

    /// Removes temporary files that a crashed create, compaction or credential change left beside the
    /// keychain (`NAME.tmp-…`). The caller holds the lock file exclusively, so none is in use.
    func removeStrayTemporaryFiles() {
        Self.removeStrayTemporaryFiles(besides: path, fileSystem: fileSystem)
    }

    /// Removes only what a rewrite could have made (SPEC.md §15.1): a regular file — not a symbolic link, not a
    /// directory — named `NAME.tmp-` and 12 lowercase hexadecimal digits. Anything else with a similar name
    /// (`NAME.tmp-backup`, `NAME.tmp-0123456789ab.old`) is someone else's.
    static func removeStrayTemporaryFiles(besides path: String, fileSystem: any FileSystem) {
        let directory = directoryName(of: path)
        let prefix = baseName(of: path) + temporarySuffix
        guard let names = try? fileSystem.contentsOfDirectory(directory) else { return }
        for name in names where isTemporaryName(name, prefix: prefix) {
            let stray = directory == "." ? name : directory + "/" + name
            if fileSystem.isRegularFile(stray) { try? fileSystem.removeIfPresent(stray) }
        }
    }

    /// Whether `name` is `prefix` followed by exactly 12 lowercase hexadecimal digits.
    static func isTemporaryName(_ name: String, prefix: String) -> Bool {
        // Compared as bytes: a name that is only canonically equivalent to the prefix is not one this library made.
        guard name.utf8.starts(with: prefix.utf8) else { return false }
        let digits = name.utf8.dropFirst(prefix.utf8.count)
        return digits.count == temporaryDigits && digits.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The infix of temporary files: `NAME.tmp-` followed by 12 lowercase hexadecimal digits.
    static let temporarySuffix = ".tmp-"
    /// How many hexadecimal digits follow ``temporarySuffix``: 6 random bytes.
    static let temporaryDigits = 12

    /// Writes a whole keychain file — header, then the items as transaction records — under a temporary name,
    /// makes it durable and puts it at `path`: renamed over the existing file if `replacing`, otherwise
    /// linked so that an existing file is never replaced. `afterRename` runs once the new file is in place,
    /// before the directory is synced, so that a failing directory sync leaves the caller on the new file.
    static func writeFile<Generator: RandomNumberGenerator>(
        at path: String, replacing: Bool, fileID: [UInt8], epoch: UInt64, epochSalt: [UInt8]? = nil, slots: [KeySlot],
        masterKey: SymmetricKey, itemCount: Int, item: (Int) -> StoredItem,
        decryptSecret: (StoredItem) throws(KeychainError) -> [UInt8], fileSystem: any FileSystem,
        using generator: inout Generator, afterRename: (WrittenFile) -> Void = { _ in }
    ) throws(KeychainError) -> WrittenFile {
        let epochSalt = epochSalt ?? randomBytes(32, using: &generator)
        let header = FileHeader(fileID: fileID, epoch: epoch, epochSalt: epochSalt, slots: slots)
        let keys = try EpochKeys(masterKey: masterKey, fileID: fileID, epoch: epoch, epochSalt: epochSalt)
        let headerBytes = header.encode(headerKey: keys.header)
        let context = RecordContext(fileID: fileID, epoch: epoch, recordKey: keys.record)

        var loaded: WrittenFile? = nil
        _ = try StagedFile.write(
            at: path, temporary: StagedFile.temporaryName(for: path, using: &generator), replacing: replacing, fileSystem: fileSystem,
            body: { (staging) throws(KeychainError) -> (end: Int, head: Head, boxes: UInt64, secrets: WrittenSecrets) in
                try headerBytes.withBytes { (bytes) throws(KeychainError) in try staging.writeAll(bytes, at: 0) }
                var end = headerBytes.count
                var head = Head(epoch: epoch, sequence: 0, chainValue: FileHeader.initialChainValue(of: headerBytes))
                var secrets = WrittenSecrets(context: context)
                var boxes: UInt64 = 0
                for chunk in chunked(itemCount, item) {
                    var entries: [LogEntry] = []
                    entries.reserveCapacity(chunk.count)
                    for rank in chunk {
                        let stored = item(rank)
                        entries.append(.put(id: stored.id, attributes: stored.attributes, secret: .bytes(try decryptSecret(stored))))
                    }
                    let start = end
                    let encoded = try RecordEncoder.encode(
                        entries, sequence: head.sequence + 1, previousChain: head.chainValue, context: context, keepingSecrets: false,
                        using: &generator,
                        writingTo: { (bytes, offset) throws(KeychainError) in
                            try bytes.withBytes { (raw) throws(KeychainError) in try staging.writeAll(raw, at: start + offset) }
                        })
                    entries.removeAll()
                    end += encoded.frameCount
                    head = Head(epoch: epoch, sequence: head.sequence + 1, chainValue: encoded.chainValue)
                    boxes += UInt64(encoded.boxCount)
                    secrets.append(encoded, at: start)
                    ProgressReporting.itemsWritten(chunk.upperBound, of: itemCount)
                }
                if itemCount == 0 { ProgressReporting.itemsWritten(0, of: 0) }
                guard secrets.count == itemCount else {
                    throw KeychainError.invalidParameter("internal error: \(secrets.count) of \(itemCount) items written to a new file")
                }
                return (end, head, boxes, secrets)
            },
            afterPlacing: { (written, staging, identity) in
                let file = WrittenFile(
                    state: FileState(
                        file: staging, identity: identity, header: header, headerLength: headerBytes.count,
                        context: context, masterKey: masterKey, headerKey: keys.header,
                        headerSeen: HeaderFingerprint(written: headerBytes, at: [0]), end: written.end, head: written.head,
                        tornTail: nil, boxesSealed: written.boxes),
                    secrets: written.secrets)
                loaded = file
                afterRename(file)
            })
        guard let loaded else { throw .invalidParameter("internal error: a new file was written but not put in place") }
        return loaded
    }

    /// The ranks `0 ..< count` in groups of at most 4,096 items, or about 4 MiB of secrets: one transaction
    /// record each.
    private static func chunked(_ count: Int, _ item: (Int) -> StoredItem) -> [Range<Int>] {
        var chunks: [Range<Int>] = []
        var start = 0
        var bytes = 0
        for rank in 0..<count {
            let size = item(rank).secret.box.count + 512
            bytes += size
            if rank - start >= 4_096 || bytes > 4 << 20 {
                chunks.append(start..<rank)
                start = rank
                bytes = size
            }
        }
        if start < count { chunks.append(start..<count) }
        return chunks
    }
}
