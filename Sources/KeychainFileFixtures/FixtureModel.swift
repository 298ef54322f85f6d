import Foundation
@_spi(Fixtures) import KeychainFile
import KeychainCrypto

/// The items a fixture must contain; in format version 3 also its groups and their heads.
struct FixtureModel {
    let expected: [PersistentReference: (attributes: ItemAttributes, secret: [UInt8])]
    var groups: Set<String> = [""]
    var groupHeads: [Head.Group] = []
    var tombstones: [ItemID: (time: Int64, group: String)] = [:]

    /// What a credential reaching only `scope` sees: the items of those groups, and those groups. Heads are read
    /// by every holder (SPEC.md §35.7) and stay.
    func scoped(to scope: [String]) -> FixtureModel {
        FixtureModel(expected: expected.filter { scope.contains(groupName($0.value.attributes)) },
                     groups: groups.intersection(scope), groupHeads: groupHeads,
                     tombstones: tombstones.filter { scope.contains($0.value.group) })
    }

    /// The tombstones sorted by item id: `{"id", "time", "group"}`, the time in milliseconds since 1970.
    func tombstonesJSON() -> ManifestJSON {
        .array(tombstones.sorted { hex($0.key.bytes) < hex($1.key.bytes) }.map { id, tombstone in
            .object(["id": .string(hex(id.bytes)), "time": .integer(tombstone.time), "group": .string(tombstone.group)])
        })
    }

    func groupsJSON() -> ManifestJSON { .array(groups.sorted().map { .string($0) }) }

    func groupHeadsJSON() -> ManifestJSON {
        .array(groupHeads.sorted { $0.keyID < $1.keyID }.map {
            .object([
                "keyID": .integer(Int64($0.keyID)), "startEpoch": .integer(Int64($0.startEpoch)),
                "sequence": .integer(Int64($0.sequence)), "lastTag": .string(hex($0.lastTag)),
            ])
        })
    }

    func itemsJSON() -> ManifestJSON {
        let sorted = expected.sorted { hex($0.key.itemID.bytes) < hex($1.key.itemID.bytes) }
        return .array(sorted.map { reference, state in
            .object([
                "id": .string(hex(reference.itemID.bytes)),
                "class": .string(className(state.attributes.itemClass)),
                "attributes": attributesJSON(state.attributes),
                "secret": .string(hex(state.secret)),
            ])
        })
    }
}

/// The access group an item's attributes name; the default group (the empty name) when none.
func groupName(_ attributes: ItemAttributes) -> String {
    if case .string(let name)? = attributes[.accessGroup] { return name }
    return ""
}
