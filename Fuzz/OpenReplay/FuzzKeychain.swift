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
        try RecordLog.salvage(from: Self.path, credential: credential, to: destination, fileSystem: fileSystem, using: &random)
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

    /// Every item with its secret decrypted. Secrets were tag-checked during replay, so decrypting one must
    /// not fail.
    init(of keychain: Keychain) {
        let index = keychain.withLock { keychain.index }
        var items: [Item] = []
        for stored in index.itemsInAddedOrder() {
            // The index's tables (ids, primary keys) find every item it holds, and only that item.
            Invariant.check(index[stored.id]?.id == stored.id, "item \(stored.id) is not found by its id")
            Invariant.check(
                index.itemID(for: stored.attributes.primaryKey) == stored.id, "item \(stored.id) is not found by its primary key")
            do {
                let secret = try keychain.secret(for: PersistentReference(itemID: stored.id))
                items.append(Item(id: stored.id, attributes: stored.attributes, secret: secret))
            } catch {
                Invariant.check(false, "the secret of item \(stored.id), verified during replay, does not open: \(error)")
            }
        }
        self.items = items
    }
}
