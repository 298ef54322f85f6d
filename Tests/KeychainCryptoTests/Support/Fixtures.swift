import Foundation
import Testing
import KeychainTestSupport

/// Access to the published and differential vectors under `Fixtures/crypto/`.
enum Fixtures {
    /// The repository's `Fixtures/crypto` directory, found from this source file's path so that tests run
    /// from any working directory.
    static let cryptoDirectory: URL = RepositoryFiles.url("Fixtures/crypto")

    static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: cryptoDirectory.appendingPathComponent(relativePath))
    }

    static func json<T: Decodable>(_ type: T.Type, _ relativePath: String) throws -> T {
        try JSONDecoder().decode(T.self, from: data(relativePath))
    }

    /// Parses a NIST CAVP `.rsp` file into records of `KEY = value` lines, each tagged with the section
    /// (`[ENCRYPT]`, `[L = 32]`, …) it appears under.
    static func responseFile(_ relativePath: String) throws -> [ResponseRecord] {
        let text = String(decoding: try data(relativePath), as: UTF8.self)
        var records: [ResponseRecord] = []
        var section = ""
        var current: [String: String] = [:]
        func flush() {
            if !current.isEmpty { records.append(ResponseRecord(section: section, fields: current)) }
            current = [:]
        }
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty { flush(); continue }
            if line.hasPrefix("#") { continue }
            if line.hasPrefix("[") { flush(); section = line; continue }
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            current[parts[0]] = parts[1]
        }
        flush()
        return records
    }
}

struct ResponseRecord {
    let section: String
    let fields: [String: String]

    func hex(_ key: String) throws -> [UInt8] {
        guard let value = fields[key] else { throw FixtureError.missingField(key) }
        return try [UInt8](hex: value)
    }
}

enum FixtureError: Error {
    case missingField(String)
}

extension Array where Element == UInt8 {
    /// Decodes lowercase or uppercase hexadecimal.
    init(hex: String) throws {
        try self.init(hexString: hex)
    }

    var hex: String { hexString }
}

/// Hex strings decode lazily in the Codable structs below.
struct Hex: Decodable, CustomStringConvertible {
    let bytes: [UInt8]
    init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        bytes = try [UInt8](hex: text)
    }
    var description: String { bytes.hex }
}

/// A small deterministic generator for splitting inputs at random points; test data only.
typealias SeededGenerator = SplitMix64

/// Splits `bytes` into consecutive pieces at random points (possibly empty pieces).
func randomSplit(_ bytes: [UInt8], using generator: inout SeededGenerator) -> [ArraySlice<UInt8>] {
    var pieces: [ArraySlice<UInt8>] = []
    var start = 0
    while start < bytes.count {
        let length = Int.random(in: 0...min(bytes.count - start, 200), using: &generator)
        pieces.append(bytes[start..<(start + length)])
        start += length
    }
    return pieces
}

/// A sequence of bytes without contiguous storage, to exercise the copying input path.
struct NonContiguousBytes: Sequence {
    let bytes: [UInt8]
    func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
}
