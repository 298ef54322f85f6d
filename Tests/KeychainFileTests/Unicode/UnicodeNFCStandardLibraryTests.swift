import Testing
@testable import KeychainFile

/// Where UnicodeNFC and the standard library's `String._nfcCodeUnits` (format version 1's password
/// normalisation, `Credential.normalizedPasswordBytes`) differ, over the source column (c1) of
/// NormalizationTest.txt. It documents the difference for the format-version-2 SPEC: a version-1 password
/// in one of these forms derives a different key under the two. It asserts only that UnicodeNFC conforms,
/// since the standard library's behaviour is not this project's to fix (and may change with the toolchain).
@Suite("UnicodeNFC: where the standard library's NFC differs from Unicode 15.0's")
struct UnicodeNFCStandardLibraryTests {
    @Test("Lists the c1 sources whose standard-library NFC is not UnicodeNFC's (printed), and UnicodeNFC conforms on all")
    func differencesOnSourceColumn() throws {
        let data = try NormalizationTestData.shared()
        var differences: [String] = []
        var differencesByPart: [Int: Int] = [:]
        var nonConforming: [Int] = []
        for line in data.lines {
            let source = String(String.UnicodeScalarView(line.source))
            let ours = UnicodeNFC.utf8(of: source)
            if ours != Array(String(String.UnicodeScalarView(line.nfc)).utf8) { nonConforming.append(line.lineNumber) }
            let standardLibrary = source._nfcCodeUnits
            guard standardLibrary != ours else { continue }
            differencesByPart[line.part, default: 0] += 1
            differences.append("line \(line.lineNumber): \(NormalizationTestData.hex(line.source)) → UnicodeNFC "
                + "\(NormalizationTestData.hex(String(decoding: ours, as: UTF8.self).unicodeScalars)), standard library "
                + "\(NormalizationTestData.hex(String(decoding: standardLibrary, as: UTF8.self).unicodeScalars))")
        }
        let parts = differencesByPart.sorted { $0.key < $1.key }.map { "part \($0.key): \($0.value)" }.joined(separator: ", ")
        print("unicode-nfc: the standard library's NFC differs from UnicodeNFC on \(differences.count) of "
            + "\(data.lines.count) c1 sources of NormalizationTest.txt (\(parts))")
        for difference in differences.prefix(12) { print("unicode-nfc:   \(difference)") }
        #expect(nonConforming.isEmpty, "UnicodeNFC(c1) != c2 on lines \(nonConforming.prefix(10))")
    }

    /// NormalizationTest.txt does not hold the sequences where the two differ; NFCDifferentialTests' seeded
    /// random sequences do. There is no oracle here, so it asserts only what NFC must be whatever the input:
    /// idempotent, and the same through the quick check and the full algorithm.
    @Test("Lists where the standard library's NFC differs on NFCDifferentialTests' 60,000 seeded random sequences (printed)")
    func differencesOnRandomSequences() {
        var generator = TestRandom(seed: 0x4E46_4300)   // NFCDifferentialTests' seed and pools: its sequences
        var differences: [String] = []
        var withTibetanVowelSign = 0
        var failures: [String] = []
        for _ in 0..<60_000 {
            var scalars: [Unicode.Scalar] = []
            for _ in 0..<Int.random(in: 1...16, using: &generator) {
                let pool = NFCDifferentialTests.pools[Int.random(in: 0..<NFCDifferentialTests.pools.count, using: &generator)]
                scalars.append(Unicode.Scalar(pool[Int.random(in: 0..<pool.count, using: &generator)])!)
            }
            let ours = UnicodeNFC.normalize(scalars)
            if UnicodeNFC.normalize(ours) != ours || UnicodeNFC.normalizeWithoutQuickCheck(scalars) != ours {
                failures.append(NormalizationTestData.hex(scalars))
            }
            let standardLibrary = String(String.UnicodeScalarView(scalars))._nfcCodeUnits
            guard standardLibrary != Array(String(String.UnicodeScalarView(ours)).utf8) else { continue }
            if scalars.contains(where: { [0x0F73, 0x0F75, 0x0F81].contains($0.value) }) { withTibetanVowelSign += 1 }
            differences.append("\(NormalizationTestData.hex(scalars)) → UnicodeNFC \(NormalizationTestData.hex(ours)), "
                + "standard library \(NormalizationTestData.hex(String(decoding: standardLibrary, as: UTF8.self).unicodeScalars))")
        }
        print("unicode-nfc: the standard library's NFC differs from UnicodeNFC on \(differences.count) of 60000 random "
            + "sequences, \(withTibetanVowelSign) of them with U+0F73, U+0F75 or U+0F81")
        for difference in differences.prefix(8) { print("unicode-nfc:   \(difference)") }
        #expect(failures.isEmpty, "\(failures.count) sequences whose NFC is not stable, first: \(failures.prefix(10))")
    }
}
