import Foundation
@testable import KeychainFile

/// The accounts of the generic passwords of service "svc" that a recovering open served and named
/// ``Damage/Loss/unconfirmed``: changed before a break in the record chain that no head read after it confirms.
func unconfirmedAccounts(_ keychain: Keychain) throws -> Set<String> {
    let named = Set((keychain.recovery?.damage ?? []).compactMap { $0.loss == .unconfirmed ? $0.itemID : nil })
    var accounts = Set<String>()
    var results: [SearchResult] = []
    do throws(KeychainError) {
        results = try keychain.search(Query(.genericPassword, limit: .all), returning: [.attributes, .persistentReference])
    } catch {
        guard case .itemNotFound = error else { throw error }
    }
    for result in results {
        guard let id = result.persistentReference?.itemID, named.contains(id), let account = result.attributes?.string(.account) else { continue }
        accounts.insert(account)
    }
    return accounts
}

/// The damage a recovering open listed, but for ``Damage/Loss/unconfirmed``: what the damage cost.
func costs(_ damage: [Damage]) -> [Damage] { damage.filter { $0.loss != .unconfirmed } }
