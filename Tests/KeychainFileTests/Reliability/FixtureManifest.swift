import Foundation
import KeychainCrypto
@testable import KeychainFile

/// A conformance fixture of Fixtures/v1 and what its manifest says (the format of Fixtures/README.md): the
/// credential that opens it and, for a file that opens, the items it holds and its torn tail.
struct FixtureManifest {
    let name: String
    let bytes: [UInt8]
    let credential: Credential
    /// "opens" or "fails".
    let outcome: String
    /// For a fixture that opens: its items, exactly as the manifest lists them.
    let expected: KeychainSnapshot?
    let expectedSequence: UInt64?
    let expectedTornTail: (offset: Int, byteCount: Int)?

    enum ManifestError: Error, CustomStringConvertible {
        case malformed(String)
        var description: String { switch self { case .malformed(let what): return "malformed manifest: \(what)" } }
    }

    /// The names of every fixture, from the directory listing.
    static var names: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: TestFixtures.directory.appendingPathComponent("v1").path)) ?? []
        return names.filter { $0.hasSuffix(".kcf") }.map { String($0.dropLast(4)) }.sorted()
    }

    init(_ name: String) throws {
        self.name = name
        bytes = try TestFixtures.bytes("v1/\(name).kcf")
        guard let manifest = try JSONSerialization.jsonObject(with: TestFixtures.data("v1/\(name).json")) as? [String: Any],
              let credentialObject = manifest["credential"] as? [String: Any],
              let expect = manifest["expect"] as? [String: Any], let outcome = expect["outcome"] as? String else {
            throw ManifestError.malformed(name)
        }
        if let password = credentialObject["password"] as? String {
            credential = .password(password)
        } else if let key = credentialObject["key"] as? String {
            credential = .key(SymmetricKey(data: try hex(key)))
        } else {
            throw ManifestError.malformed("\(name): credential")
        }
        self.outcome = outcome
        guard outcome == "opens" else {
            expected = nil
            expectedSequence = nil
            expectedTornTail = nil
            return
        }
        guard let items = expect["items"] as? [[String: Any]], let head = expect["head"] as? [String: Any],
              let sequence = head["sequence"] as? Int else {
            throw ManifestError.malformed("\(name): items or head")
        }
        expectedSequence = UInt64(sequence)
        if let torn = expect["tornTail"] as? [String: Any], let offset = torn["offset"] as? Int, let count = torn["byteCount"] as? Int {
            expectedTornTail = (offset, count)
        } else {
            expectedTornTail = nil
        }
        var snapshot = KeychainSnapshot()
        for item in items {
            guard let id = item["id"] as? String, let className = item["class"] as? String, let secret = item["secret"] as? String,
                  let attributes = item["attributes"] as? [String: [String: Any]],
                  let itemClass = Self.classNames[className] else {
                throw ManifestError.malformed("\(name): an item")
            }
            var values: [Attribute: AttributeValue] = [:]
            for (attributeName, typed) in attributes {
                guard let attribute = Attribute.all.first(where: { $0.name == attributeName }), let (type, value) = typed.first else {
                    throw ManifestError.malformed("\(name): attribute \(attributeName)")
                }
                values[attribute] = try Self.value(type: type, value, of: attributeName)
            }
            snapshot.items[try ItemID(bytes: try hex(id))] = KeychainSnapshot.Item(
                attributes: try ItemAttributes(itemClass: itemClass, values: values), secret: try hex(secret))
        }
        expected = snapshot
    }

    private static let classNames: [String: ItemClass] = [
        "genericPassword": .genericPassword, "internetPassword": .internetPassword, "certificate": .certificate, "key": .key,
    ]

    private static func value(type: String, _ value: Any, of attribute: String) throws -> AttributeValue {
        switch (type, value) {
        case ("string", let text as String): return .string(text)
        case ("bytes", let text as String): return .bytes(try hex(text))
        case ("integer", let number as NSNumber): return .integer(number.int64Value)
        case ("boolean", let number as NSNumber): return .boolean(number.intValue != 0)
        case ("date", let number as NSNumber): return .date(milliseconds: number.int64Value)
        default: throw ManifestError.malformed("attribute \(attribute): \(type)")
        }
    }

    /// The header length H stored in the file (SPEC.md §4), or nil for a file too short to hold it.
    var headerLength: Int? {
        guard bytes.count >= 16 else { return nil }
        return bytes[12..<16].reduce(0) { $0 << 8 | Int($1) }
    }
}
