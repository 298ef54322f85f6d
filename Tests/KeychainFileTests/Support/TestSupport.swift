import Foundation
import Testing
@testable import KeychainFile
@_exported import KeychainTestSupport

/// Access to the files under `Fixtures/`, found from this source file's path so that tests run from any
/// working directory.
enum TestFixtures {
    /// The repository's `Fixtures` directory.
    static let directory: URL = RepositoryFiles.fixtures

    static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(relativePath))
    }

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try data(relativePath))
    }

    static func json<T: Decodable>(_ type: T.Type, _ relativePath: String) throws -> T {
        try JSONDecoder().decode(T.self, from: data(relativePath))
    }
}

enum TestSupportError: Error {
    case unexpectedFixture(String)
}

/// Shorthand for `[UInt8](hexString:)` in expectations.
func hex(_ text: String) throws -> [UInt8] {
    try [UInt8](hexString: text)
}

/// A small deterministic generator for test data only.
typealias TestRandom = SplitMix64

/// Asserts that `body` throws `KeychainError.invalidParameter` whose text contains every one of
/// `fragments`, and returns the text.
@discardableResult
func expectInvalidParameter(
    _ fragments: String..., sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> String? {
    do {
        try body()
        Issue.record("expected invalidParameter(\(fragments)), nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch {
        guard case .invalidParameter(let text)? = error as? KeychainError else {
            Issue.record("expected invalidParameter, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
        for fragment in fragments where !text.contains(fragment) {
            Issue.record("\"\(text)\" does not contain \"\(fragment)\"", sourceLocation: sourceLocation)
        }
        return text
    }
}

/// A value of `attribute`'s type that differs from the default and is within its range: used to fill
/// every attribute of a class.
func sampleValue(for attribute: Attribute, variant: Int = 0) -> AttributeValue {
    switch attribute.type {
    case .string: return .string("\(attribute.name) value \(variant) ✓")
    case .bytes: return .bytes(Array("\(attribute.name)-\(variant)".utf8) + [0x00, 0xff])
    case .integer:
        if let range = attribute.integerRange {
            // The upper end minus the variant stays inside every range of SPEC.md §8.2 for small variants.
            return .integer(Swift.max(range.lowerBound, range.upperBound - Int64(variant)))
        }
        return .integer(-1_234_567_890_123 + Int64(variant))
    case .boolean: return .boolean(variant % 2 == 0)
    case .date: return .date(milliseconds: 1_767_225_600_123 + Int64(variant))
    }
}

/// Every attribute allowed in `itemClass`, each with a sample value.
func everyAttribute(of itemClass: ItemClass, variant: Int = 0) -> [Attribute: AttributeValue] {
    var values: [Attribute: AttributeValue] = [:]
    for attribute in Attribute.all where attribute.isAllowed(in: itemClass) {
        values[attribute] = sampleValue(for: attribute, variant: variant)
    }
    return values
}

/// A fixed item id 00 01 02 … 0f.
let sequentialID: ItemID = {
    do { return try ItemID(bytes: UInt8(0)...UInt8(15)) } catch { fatalError("16 bytes are a valid item id") }
}()
