import Foundation
import Testing
@testable import KeychainFile

/// UnicodeNFC against the Unicode Normalization Test Suite of its Unicode version (UAX #15 §10), both its
/// invariants for NFC: on every line of the file, and on every code point the file does not list.
@Suite("UnicodeNFC: conformance to Unicode 15.0's NormalizationTest.txt")
struct UnicodeNFCConformanceTests {
    private typealias Line = NormalizationTestData.Line

    private static func string(_ scalars: [Unicode.Scalar]) -> String {
        String(String.UnicodeScalarView(scalars))
    }

    @Test("The data file is the Unicode 15.0 test suite, whole, and matches the tables' version")
    func dataFile() throws {
        let data = try NormalizationTestData.shared()
        #expect(data.versionLine.contains("NormalizationTest-15.0.0.txt"))
        #expect(UnicodeNFC.unicodeVersion == "15.0.0")
        #expect(data.lines.count == 19_074)
        #expect(Set(data.lines.map(\.part)) == [0, 1, 2, 3])
    }

    /// UAX #15's NFC invariants, through every entry point: `normalize` on the scalars and `utf8(of:)` on the
    /// string (both take the quick-check path for the columns that are already NFC), and the full algorithm
    /// without the quick check.
    @Test("Every line: c2 == NFC(c1) == NFC(c2) == NFC(c3) and c4 == NFC(c4) == NFC(c5), as scalars and as UTF-8")
    func everyLine() throws {
        let data = try NormalizationTestData.shared()
        var failures: [String] = []
        for line in data.lines {
            let columns = [("c1", line.source, line.nfc), ("c2", line.nfc, line.nfc), ("c3", line.nfd, line.nfc),
                           ("c4", line.nfkc, line.nfkc), ("c5", line.nfkd, line.nfkc)]
            for (name, input, expected) in columns {
                let scalars = UnicodeNFC.normalize(input)
                let bytes = UnicodeNFC.utf8(of: Self.string(input))
                let full = UnicodeNFC.normalizeWithoutQuickCheck(input)
                if scalars != expected || full != expected || bytes != Array(Self.string(expected).utf8) {
                    failures.append("line \(line.lineNumber) \(name): NFC(\(NormalizationTestData.hex(input))) = "
                        + "\(NormalizationTestData.hex(scalars)), in full \(NormalizationTestData.hex(full)), UTF-8 \(NormalizationTestData.hex(String(decoding: bytes, as: UTF8.self).unicodeScalars)); "
                        + "expected \(NormalizationTestData.hex(expected))")
                }
            }
        }
        print("unicode-nfc: \(data.lines.count) lines of NormalizationTest.txt (5 columns each), \(failures.count) failures")
        #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(10))")
    }

    /// Part 1 lists every code point whose normal forms are not itself; every other one is its own NFC. This
    /// checks unassigned code points too, which are their own NFC as well (they have no decomposition and
    /// class 0). Each goes through the quick check and through the full algorithm.
    @Test("Every code point not in part 1 (all planes, surrogates excepted) is its own NFC")
    func everyCodePointNotInPartOne() throws {
        let data = try NormalizationTestData.shared()
        let listed = Set(data.lines.filter { $0.part == 1 }.map { line -> UInt32 in
            #expect(line.source.count == 1, "line \(line.lineNumber) of part 1 is not one code point")
            return line.source[0].value
        })
        var checked = 0
        var failures: [String] = []
        for value in UInt32(0)...0x10_FFFF where !listed.contains(value) {
            guard let scalar = Unicode.Scalar(value) else { continue }   // nil exactly for the surrogates
            checked += 1
            let normalized = UnicodeNFC.normalize(CollectionOfOne(scalar))
            let full = UnicodeNFC.normalizeWithoutQuickCheck(CollectionOfOne(scalar))
            let bytes = UnicodeNFC.utf8(of: String(Character(scalar)))
            if normalized != [scalar] || full != [scalar] || bytes != Array(String(Character(scalar)).utf8) {
                failures.append(NormalizationTestData.hex([scalar]))
            }
        }
        print("unicode-nfc: \(listed.count) code points in part 1, \(checked) others checked, \(failures.count) failures")
        #expect(listed.count > 10_000)
        #expect(checked == 0x11_0000 - 0x800 - listed.count)
        #expect(failures.isEmpty, "\(failures.count) code points are not their own NFC, first: \(failures.prefix(20))")
    }
}
