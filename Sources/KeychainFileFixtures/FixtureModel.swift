import Foundation
@_spi(Fixtures) import KeychainFile
import KeychainCrypto

/// The items a fixture must contain.
struct FixtureModel {
    let expected: [PersistentReference: (attributes: ItemAttributes, secret: [UInt8])]

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
