import Foundation
@testable import KeychainFile

/// What the harness does with bytes once they are a keychain file: open them, and after a successful open
/// walk every read path, write to the file, compact it and salvage it, checking that each step agrees
/// with the first open. Thrown `KeychainError`s from the open and salvage are expected for hostile input;
/// a step that fails after a successful open is a finding.
enum OpenedKeychainChecks {
    /// How much work to do after a successful open.
    enum Depth {
        /// Read paths only.
        case read
        /// Read paths, then an append, a compaction and a salvage, each reopened and compared.
        case full
    }

    static func run(_ bytes: [UInt8], credential: Credential, depth: Depth) {
        var store = FuzzKeychain(bytes)
        let keychain: Keychain
        do {
            keychain = try store.open(with: credential)
        } catch {
            trace("\(credential.traceName): \(error)")
            if depth == .full, case .corrupted = error {
                checkSalvage(bytes, credential: credential, opened: nil)
                checkRecovery(&store, credential: credential)
            }
            return
        }
        let contents = KeychainContents(of: keychain)
        trace("\(credential.traceName): opened, \(contents.items.count) items, head \(keychain.head), torn tail \(keychain.tornTail.map(String.init(describing:)) ?? "none")")
        Invariant.check(contents.items.count == keychain.count, "index count \(keychain.count) ≠ \(contents.items.count) items")
        exerciseReadPaths(keychain, contents: contents)
        guard depth == .full else { return }
        checkReopen(&store, credential: credential, contents: contents, head: keychain.head)
        // A final record that may hold acknowledged data (SPEC.md §9.3): salvage and recovery read what of it
        // authenticates, and no write may cut it off.
        if keychain.tornTail?.mayHoldAcknowledgedData == true {
            checkSalvage(bytes, credential: credential, opened: nil)
            checkRecovery(&store, credential: credential)
            checkWritesRefused(&store, keychain, bytes: bytes)
            return
        }
        checkSalvage(bytes, credential: credential, opened: (contents, keychain.head))
        checkAppend(&store, keychain, credential: credential, contents: contents)
        checkCompaction(&store, keychain, credential: credential)
    }

    /// A recovering open of a damaged file serves exactly what salvage keeps, reading every secret.
    static func checkRecovery(_ store: inout FuzzKeychain, credential: Credential) {
        let recovered: Keychain
        do {
            recovered = try store.openRecovering(with: credential)
        } catch {
            trace("\(credential.traceName): recovering open: \(error)")
            return
        }
        let contents = KeychainContents(of: recovered)
        Invariant.check(contents.items.count == recovered.count, "recovery: index count \(recovered.count) ≠ \(contents.items.count) items")
        exerciseReadPaths(recovered, contents: contents)
        do {
            try recovered.add(GenericPassword(service: "fuzz.harness.invalid", account: "appended", password: "appended"))
            Invariant.check(false, "a keychain opened with recovery accepted a write")
        } catch {
        }
    }

    /// Neither an append nor a compaction changes a file whose final record may hold acknowledged data.
    static func checkWritesRefused(_ store: inout FuzzKeychain, _ keychain: Keychain, bytes: [UInt8]) {
        do {
            try keychain.add(GenericPassword(service: "fuzz.harness.invalid", account: "appended", password: "appended"))
            Invariant.check(false, "an append cut off a tail that may hold acknowledged data")
        } catch {
        }
        do {
            try keychain.compact()
            Invariant.check(false, "a compaction dropped a tail that may hold acknowledged data")
        } catch {
        }
        do {
            let file = try store.fileSystem.openExisting(FuzzKeychain.path)
            defer { file.close() }
            let now = try file.readExactly(count: try file.size(), at: 0)
            Invariant.check(now == bytes, "a refused write changed the file")
        } catch {
            Invariant.check(false, "the file cannot be read back: \(error)")
        }
    }

    /// Searches of every class (secrets decrypted), the typed finds, certificate DER and statistics.
    static func exerciseReadPaths(_ keychain: Keychain, contents: KeychainContents) {
        var found = 0
        for queryClass in [QueryClass.genericPassword, .internetPassword, .certificate, .key] {
            do {
                let results = try keychain.search(
                    Query(queryClass, synchronizable: .any), returning: [.attributes, .data, .persistentReference])
                found += results.count
            } catch .itemNotFound {
            } catch {
                Invariant.check(false, "searching \(queryClass) items failed: \(error)")
            }
        }
        Invariant.check(found == contents.items.count, "searches of all classes found \(found) of \(contents.items.count) items")
        for item in contents.items { checkFoundByItsAttributes(keychain, item) }
        _ = try? keychain.search(Query(.identity, synchronizable: .any), returning: [.attributes, .data])
        _ = try? keychain.find(GenericPassword.self, matching: Query(.genericPassword, synchronizable: .any))
        _ = try? keychain.find(InternetPassword.self, matching: Query(.internetPassword, synchronizable: .any))
        _ = try? keychain.find(Key.self, matching: Query(.key, synchronizable: .any))
        _ = try? keychain.find(Certificate.self, matching: Query(.certificate, synchronizable: .any))
        _ = try? keychain.findIdentities(matching: Query(.identity, synchronizable: .any))
        for item in contents.items where item.attributes.itemClass == .certificate {
            _ = try? Certificate(der: item.secret)
        }
        do {
            let statistics = try keychain.statistics()
            Invariant.check(statistics.itemCount == contents.items.count, "statistics count \(statistics.itemCount)")
        } catch {
            Invariant.check(false, "statistics failed: \(error)")
        }
    }

    /// A search for an item's own attribute values (all but the dates, which the public `Date` cannot hold
    /// exactly beyond 2⁵³ ms, and synchronizable, which a query matches separately) finds it — through the
    /// lookup indexes where the query has their attributes.
    static func checkFoundByItsAttributes(_ keychain: Keychain, _ item: KeychainContents.Item) {
        let queryClass: QueryClass
        switch item.attributes.itemClass {
        case .genericPassword: queryClass = .genericPassword
        case .internetPassword: queryClass = .internetPassword
        case .certificate: queryClass = .certificate
        case .key: queryClass = .key
        }
        var values = item.attributes.values
        for excluded in [Attribute.creationDate, .modificationDate, .synchronizable] { values[excluded] = nil }
        let synchronizable: SynchronizableMatch = item.attributes[.synchronizable] == .boolean(true) ? .yes : .no
        do {
            let results = try keychain.search(
                Query(queryClass, attributes: values, synchronizable: synchronizable, returning: [.persistentReference]))
            Invariant.check(
                results.contains { $0.persistentReference?.itemID == item.id },
                "a search for the attributes of item \(item.id) does not find it")
        } catch {
            Invariant.check(false, "a search for the attributes of item \(item.id) failed: \(error)")
        }
    }

    /// Opening the same bytes again gives the same items and head.
    static func checkReopen(_ store: inout FuzzKeychain, credential: Credential, contents: KeychainContents, head: Head) {
        do {
            let again = try store.open(with: credential)
            Invariant.check(again.head == head, "reopening gave head \(again.head), first \(head)")
            Invariant.check(KeychainContents(of: again) == contents, "reopening gave other items")
        } catch {
            Invariant.check(false, "a file that opened does not open again: \(error)")
        }
    }

    /// Salvage of a file that opened keeps everything and reports no damage; salvage of a damaged file
    /// writes a file that opens with the items it reports.
    static func checkSalvage(_ bytes: [UInt8], credential: Credential, opened: (contents: KeychainContents, head: Head)?) {
        var store = FuzzKeychain(bytes)
        let report: SalvageReport
        do {
            report = try store.salvage(with: credential, to: "/fuzz/salvaged.kcf")
        } catch {
            Invariant.check(opened == nil, "salvage of a file that opened failed: \(error)")
            return
        }
        if let opened {
            Invariant.check(report.damage == nil, "salvage found damage in a file that opened: \(report.damage!)")
            Invariant.check(report.keptHead == opened.head, "salvage kept head \(report.keptHead), open saw \(opened.head)")
            Invariant.check(report.itemCount == opened.contents.items.count, "salvage kept \(report.itemCount) items")
        }
        do {
            let salvaged = try store.open("/fuzz/salvaged.kcf", with: credential)
            let contents = KeychainContents(of: salvaged)
            Invariant.check(contents.items.count == report.itemCount, "the salvaged file holds \(contents.items.count) of \(report.itemCount) items")
            Invariant.check(salvaged.tornTail == nil, "the salvaged file has a torn tail")
            if let opened { Invariant.check(contents == opened.contents, "salvage changed the items") }
        } catch {
            Invariant.check(false, "the salvaged file does not open: \(error)")
        }
    }

    /// An add after open (cutting off any torn tail) is read back by a fresh open.
    static func checkAppend(_ store: inout FuzzKeychain, _ keychain: Keychain, credential: Credential, contents: KeychainContents) {
        do {
            try keychain.add(GenericPassword(service: "fuzz.harness.invalid", account: "appended", password: "appended"))
        } catch .duplicateItem {
            return
        } catch {
            Invariant.check(false, "adding an item to a file that opened failed: \(error)")
        }
        do {
            let again = try store.open(with: credential)
            Invariant.check(again.tornTail == nil, "a torn tail survived an append: \(again.tornTail!)")
            Invariant.check(again.head == keychain.head, "after an append, reopening gave head \(again.head), writer \(keychain.head)")
            let reread = KeychainContents(of: again)
            Invariant.check(reread.items.count == contents.items.count + 1, "after an append, \(reread.items.count) items, expected \(contents.items.count + 1)")
            Invariant.check(Array(reread.items.prefix(contents.items.count)) == contents.items, "an append changed earlier items")
        } catch {
            Invariant.check(false, "after an append the file does not open: \(error)")
        }
    }

    /// Compaction keeps every item, and the compacted file opens with the same items.
    static func checkCompaction(_ store: inout FuzzKeychain, _ keychain: Keychain, credential: Credential) {
        let before = KeychainContents(of: keychain)
        do {
            try keychain.compact()
        } catch {
            Invariant.check(false, "compaction failed: \(error)")
            return
        }
        Invariant.check(KeychainContents(of: keychain) == before, "compaction changed the items in memory")
        do {
            let again = try store.open(with: credential)
            Invariant.check(KeychainContents(of: again) == before, "the compacted file holds other items")
        } catch {
            Invariant.check(false, "the compacted file does not open: \(error)")
        }
    }
}
