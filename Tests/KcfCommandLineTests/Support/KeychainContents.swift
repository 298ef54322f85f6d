import Foundation
import Testing

/// The items of a sandbox keychain with their secrets, as `kcf dump-keychain -d --yes --json` lists them: how
/// the import tests see what an import stored.
struct KeychainContents {
    /// One item: its class, attributes (by the library's names) and secret.
    struct Item {
        let itemClass: String
        let attributes: [String: Any]
        let secret: [UInt8]

        /// A string attribute, or `nil`.
        func string(_ name: String) -> String? { attributes[name] as? String }
        /// The secret as UTF-8 text.
        var secretText: String { String(decoding: secret, as: UTF8.self) }
    }

    let items: [Item]

    /// Reads the items of the sandbox keychain (or the one at `path`).
    init(_ sandbox: KcfSandbox, path: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try sandbox.unlocked(["dump-keychain", "-d", "--yes", "--json"] + (path.map { [$0] } ?? []),
                                          sourceLocation: sourceLocation)
        #expect(result.status == 0, "dump-keychain: \(result.stderr)", sourceLocation: sourceLocation)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                                  sourceLocation: sourceLocation)
        let list = try #require(object["items"] as? [[String: Any]], sourceLocation: sourceLocation)
        items = try list.map { item in
            Item(itemClass: try #require(item["class"] as? String, sourceLocation: sourceLocation),
                 attributes: try #require(item["attributes"] as? [String: Any], sourceLocation: sourceLocation),
                 secret: Array(try #require(Data(base64Encoded: item["secretBase64"] as? String ?? "-"), sourceLocation: sourceLocation)))
        }
    }

    /// The one item of `itemClass` whose attribute `name` is `value`; records an issue when there is not exactly one.
    func item(_ itemClass: String, _ name: String, _ value: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Item {
        let matches = items.filter { $0.itemClass == itemClass && $0.string(name) == value }
        #expect(matches.count == 1, "\(matches.count) \(itemClass) items with \(name) \(value)", sourceLocation: sourceLocation)
        return try #require(matches.first, sourceLocation: sourceLocation)
    }

    /// How many items of `itemClass` there are.
    func count(_ itemClass: String) -> Int { items.filter { $0.itemClass == itemClass }.count }
}
