@testable import KeychainFile

/// The read paths a keychain that opened must serve without failing: searches of every class with secrets,
/// typed finds, identities, certificate DER, statistics, and a search for each item's own attributes.
enum ReadPathChecks {
    /// Searches of every class (secrets decrypted), the typed finds, certificate DER and statistics.
    static func run(_ keychain: Keychain, contents: KeychainContents) {
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
}
