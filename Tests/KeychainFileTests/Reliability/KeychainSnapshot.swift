import Foundation
import KeychainCrypto
@testable import KeychainFile

/// Everything a keychain holds, read back through the public API: each live item's class, attributes and
/// secret, by item id. Two snapshots are equal exactly when the keychains hold the same items.
struct KeychainSnapshot: Equatable, CustomStringConvertible {
    struct Item: Equatable {
        let attributes: ItemAttributes
        let secret: [UInt8]
    }

    var items: [ItemID: Item]

    init(items: [ItemID: Item] = [:]) { self.items = items }

    /// Reads every item of every class, synchronizable or not, with its secret.
    init(_ keychain: Keychain) throws(KeychainError) {
        var items: [ItemID: Item] = [:]
        for queryClass in [QueryClass.genericPassword, .internetPassword, .certificate, .key] {
            let results: [SearchResult]
            do throws(KeychainError) {
                results = try keychain.search(
                    Query(queryClass, synchronizable: .any), returning: [.attributes, .data, .persistentReference])
            } catch {
                guard error == .itemNotFound else { throw error }
                continue
            }
            for result in results {
                guard let reference = result.persistentReference, let attributes = result.attributes,
                      let secret = result.value else {
                    throw .invalidParameter("test: a search result lacks what was asked for")
                }
                items[reference.itemID] = Item(attributes: attributes, secret: secret)
            }
        }
        self.items = items
    }

    var description: String {
        let lines = items.sorted { $0.key.description < $1.key.description }.map { id, item in
            "\(id) \(item.attributes.itemClass) \(item.attributes.count) attributes, \(item.secret.count)-byte secret"
        }
        return "\(items.count) items" + (lines.isEmpty ? "" : ": " + lines.joined(separator: "; "))
    }
}

extension MemoryFileSystem {
    /// A memory file system holding one file, `bytes`, at `path`.
    static func holding(_ bytes: [UInt8], at path: String) throws(KeychainError) -> MemoryFileSystem {
        let fileSystem = MemoryFileSystem()
        let handle = try fileSystem.createExclusive(path)
        try bytes.withBytes { (raw) throws(KeychainError) in try handle.writeAll(raw, at: 0) }
        handle.close()
        return fileSystem
    }

    /// The whole content of the file at `path`.
    func contents(of path: String) throws(KeychainError) -> [UInt8] {
        let handle = try openExisting(path)
        defer { handle.close() }
        return try handle.readExactly(count: try handle.size(), at: 0)
    }
}

extension Keychain {
    /// Opens `bytes` as a keychain file held in memory: nothing touches the disk.
    static func openInMemory(_ bytes: [UInt8], credential: Credential) throws(KeychainError) -> Keychain {
        let path = "/memory/keychain.kcf"
        return try openForTesting(at: path, credential: credential, fileSystem: try MemoryFileSystem.holding(bytes, at: path))
    }
}

/// A 32-byte application key for raw-key slots: opening with it costs one HKDF, not thousands of PBKDF2
/// rounds, which is what lets the sweeps below open a file tens of thousands of times.
let reliabilityRawKey = Credential.key(SymmetricKey(data: (0..<32).map { UInt8($0 &* 7 &+ 3) }))

/// The attributes of an item of `itemClass` with every attribute it allows, except the dates the keychain
/// sets itself; `variant` makes primary keys differ.
func fullAttributes(of itemClass: ItemClass, variant: Int) throws(KeychainError) -> ItemAttributes {
    var values = everyAttribute(of: itemClass, variant: variant)
    values.removeValue(forKey: .creationDate)
    values.removeValue(forKey: .modificationDate)
    return try ItemAttributes(itemClass: itemClass, values: values)
}

/// Wall-clock seconds `body` took, for the counts and times the reliability tests print.
func measure<Result>(_ body: () throws -> Result) rethrows -> (Result, Double) {
    let start = Date()
    let result = try body()
    return (result, Date().timeIntervalSince(start))
}
