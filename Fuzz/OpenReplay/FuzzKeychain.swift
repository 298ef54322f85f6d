import Foundation
@testable import KeychainFile

/// Opening keychain bytes on an in-memory file system (no disk IO), with a fixed random source and clock so
/// that every execution is reproducible from its input.
struct FuzzKeychain {
    static let path = "/fuzz/keychain.kcf"
    static let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_767_225_600) }

    let fileSystem = MemoryFileSystem()
    var random = FuzzRandom()

    /// A file system holding `bytes` at ``path``.
    init(_ bytes: [UInt8]) {
        do {
            let handle = try fileSystem.createExclusive(Self.path)
            try bytes.withBytes { (raw) throws(KeychainError) in try handle.writeAll(raw, at: 0) }
            handle.close()
        } catch {
            Invariant.check(false, "the in-memory file system refused to hold the input: \(error)")
        }
    }

    mutating func open(_ path: String = Self.path, with credential: Credential) throws(KeychainError) -> Keychain {
        try Keychain.open(
            at: path, credential: credential, options: Keychain.OpenOptions(autoCompaction: .disabled),
            random: RandomSource(random), clock: Self.clock, fileSystem: fileSystem)
    }

    mutating func salvage(with credential: Credential, to destination: String) throws(KeychainError) -> SalvageReport {
        try RecordLog.salvage(
            from: Self.path, credential: credential, to: destination, acknowledgement: nil, fileSystem: fileSystem, using: &random
        ).report
    }

    /// A recovering open (read-only, every item that authenticates).
    mutating func openRecovering(with credential: Credential) throws(KeychainError) -> Keychain {
        try Keychain.open(
            at: Self.path, credential: credential, options: Keychain.OpenOptions(autoCompaction: .disabled, recover: true),
            random: RandomSource(random), clock: Self.clock, fileSystem: fileSystem)
    }
}

/// What a keychain holds, compared across reopening, compaction and salvage.
struct KeychainContents: Equatable {
    struct Item: Equatable {
        let id: ItemID
        let attributes: ItemAttributes
        let secret: [UInt8]

        /// Compared as the bytes a writer stores, so that no value can change unnoticed.
        static func == (lhs: Item, rhs: Item) -> Bool {
            lhs.id == rhs.id && lhs.secret == rhs.secret
                && AttributeCoding.encode(id: lhs.id, attributes: lhs.attributes)
                    == AttributeCoding.encode(id: rhs.id, attributes: rhs.attributes)
        }
    }

    /// Live items in the order they were first added.
    let items: [Item]

    /// Every item with its secret decrypted. Secrets were tag-checked during replay, so checking one again
    /// must not fail: a read decrypts without checking (``SealedSecret/decrypt(using:)``), so this is what
    /// catches a replay that let an unverified box into the index.
    init(of keychain: Keychain) {
        // Files of format version 2 are fuzzed by Fuzz/OpenV2; one that opens here (its header pages intact)
        // has its secrets read, not checked against version 1's boxes.
        let (index, context) = keychain.withLock { (keychain.index, (keychain.log as? RecordLog)?.context) }
        var items: [Item] = []
        for stored in index.itemsInAddedOrder() {
            // The index's tables (ids, primary keys) find every item it holds, and only that item.
            Invariant.check(index[stored.id]?.id == stored.id, "item \(stored.id) is not found by its id")
            Invariant.check(
                index.itemID(for: stored.attributes.primaryKey) == stored.id, "item \(stored.id) is not found by its primary key")
            do {
                let secret = try keychain.secret(for: PersistentReference(itemID: stored.id))
                guard let context else {
                    items.append(Item(id: stored.id, attributes: stored.attributes, secret: secret))
                    continue
                }
                let sealed = stored.secret
                let aad = BoxAAD.make(
                    fileID: context.fileID, epoch: context.epoch, sequence: sealed.sequence, kind: sealed.kind,
                    entryCount: sealed.entryCount, entryIndex: sealed.entryIndex, role: .secret, itemID: stored.id,
                    previousChain: sealed.previousChain)
                let verified = try sealed.open(using: context.boxKey, authenticating: aad)
                Invariant.check(verified == secret, "the secret of item \(stored.id) reads differently from its verified box")
                items.append(Item(id: stored.id, attributes: stored.attributes, secret: secret))
            } catch {
                Invariant.check(false, "the secret of item \(stored.id), verified during replay, does not open: \(error)")
            }
        }
        self.items = items
    }
}
