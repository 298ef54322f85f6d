import Testing
@testable import KeychainFile

/// UnicodeNFC on the cases that make NFC hard, each named for the rule of UAX #15 (or Unicode §3.11–3.12)
/// it exercises. The conformance suite covers the same ground in bulk; these say what went wrong if it fails.
@Suite("UnicodeNFC: the rules of NFC, case by case")
struct UnicodeNFCTests {
    /// The NFC of `values` as code point values, through `normalize`, checked against `utf8(of:)` and the
    /// full algorithm.
    private static func nfc(_ values: [UInt32]) -> [UInt32] {
        let scalars = values.map { Unicode.Scalar($0)! }
        let normalized = UnicodeNFC.normalize(scalars)
        #expect(UnicodeNFC.normalizeWithoutQuickCheck(scalars) == normalized, "the full algorithm disagrees with normalize")
        let bytes = UnicodeNFC.utf8(of: String(String.UnicodeScalarView(scalars)))
        #expect(bytes == Array(String(String.UnicodeScalarView(normalized)).utf8), "utf8(of:) disagrees with normalize")
        return normalized.map(\.value)
    }

    @Test("U+0F73's decomposition is ordered among the other marks: 0F40 0F80 0F73 → 0F40 0F71 0F80 0F72")
    func tibetanNonStarterDecomposition() {
        // U+0F73 decomposes to U+0F71 (class 129) U+0F72 (class 130); U+0F80 has class 130, so U+0F71 sorts
        // before it and U+0F72 after it (equal classes keep their order). The standard library's NFC gives
        // 0F40 0F80 0F71 0F72 here.
        #expect(Self.nfc([0x0F40, 0x0F80, 0x0F73]) == [0x0F40, 0x0F71, 0x0F80, 0x0F72])
        #expect(Self.nfc([0x0F40, 0x0F73]) == [0x0F40, 0x0F71, 0x0F72])
        #expect(Self.nfc([0x0F40, 0x0F71, 0x0F80, 0x0F72]) == [0x0F40, 0x0F71, 0x0F80, 0x0F72])
    }

    @Test("Hangul: L+V composes an LV syllable, LV+T an LVT syllable, and U+11A7 or a second T does not")
    func hangulComposition() {
        #expect(Self.nfc([0x1100, 0x1161]) == [0xAC00])              // ᄀ + ᅡ → 가
        #expect(Self.nfc([0x1100, 0x1161, 0x11A8]) == [0xAC01])      // ᄀ + ᅡ + ᆨ → 각
        #expect(Self.nfc([0xAC00, 0x11A8]) == [0xAC01])              // 가 + ᆨ → 각
        #expect(Self.nfc([0xD788, 0x11C2]) == [0xD7A3])              // the last syllable, the last T
        #expect(Self.nfc([0xAC00, 0x11A7]) == [0xAC00, 0x11A7])      // TIndex 0 is "no trailing consonant"
        #expect(Self.nfc([0xAC01, 0x11A8]) == [0xAC01, 0x11A8])      // an LVT syllable takes no further T
        #expect(Self.nfc([0xAC01]) == [0xAC01])                      // decomposes and recomposes to itself
        #expect(Self.nfc([0x1100, 0x0301, 0x1161]) == [0x1100, 0x0301, 0x1161])   // V blocked by a mark
    }

    @Test("A composition exclusion decomposes and does not recompose: U+0958 → U+0915 U+093C")
    func compositionExclusion() {
        #expect(Self.nfc([0x0958]) == [0x0915, 0x093C])
        #expect(Self.nfc([0x0915, 0x093C]) == [0x0915, 0x093C])
        #expect(UnicodeNFCTables.shared.composite(0x0915, 0x093C) == nil)
    }

    @Test("A singleton decomposes for good: U+212B ANGSTROM SIGN → U+00C5, U+2126 OHM SIGN → U+03A9")
    func singleton() {
        #expect(Self.nfc([0x212B]) == [0x00C5])
        #expect(Self.nfc([0x2126]) == [0x03A9])
        #expect(Self.nfc([0x0041, 0x030A]) == [0x00C5])
    }

    @Test("A non-starter decomposition does not recompose: U+0344 → U+0308 U+0301")
    func nonStarterDecomposition() {
        #expect(Self.nfc([0x0344]) == [0x0308, 0x0301])
        // ι + U+0344 → ι U+0308 U+0301 → U+03CA (ϊ) U+0301 → U+0390 (ΐ): the pieces compose, U+0344 never.
        #expect(Self.nfc([0x03B9, 0x0344]) == [0x0390])
    }

    @Test("A mark of the same class in between blocks a composition; one of a lower class does not")
    func blockedComposition() {
        // U+0305 (class 230) stands between "a" and U+0301 (230): blocked, nothing composes.
        #expect(Self.nfc([0x0061, 0x0305, 0x0301]) == [0x0061, 0x0305, 0x0301])
        // U+0316 (class 220) does not block U+0301 (230): "a" + U+0301 → U+00E1 across it.
        #expect(Self.nfc([0x0061, 0x0316, 0x0301]) == [0x00E1, 0x0316])
        // A starter in between blocks: "a" "b" U+0301 composes nothing with "a".
        #expect(Self.nfc([0x0061, 0x0062, 0x0301]) == [0x0061, 0x0062, 0x0301])
        // Canonical ordering first: U+0301 (230) U+0323 (220) reorder, then a + U+0323 → U+1EA1, and
        // U+1EA1 + U+0301 has no composite.
        #expect(Self.nfc([0x0061, 0x0301, 0x0323]) == [0x1EA1, 0x0301])
        // Composites compose further: A + U+0308 → U+00C4, + U+0304 → U+01DE.
        #expect(Self.nfc([0x0041, 0x0308, 0x0304]) == [0x01DE])
    }

    @Test("A run of 1,000 marks of five classes sorts stably by class (no mark composes with x)")
    func longRunSortsStably() {
        var generator = TestRandom(seed: 0x4E46_4301)
        let marks: [(value: UInt32, combiningClass: Int)] = [
            (0x0316, 220), (0x0305, 230), (0x031B, 216), (0x0334, 1), (0x0345, 240), (0x0317, 220),
        ]
        let run = (0..<1_000).map { _ in marks[Int.random(in: 0..<marks.count, using: &generator)] }
        var expected = run
        expected.sort { $0.combiningClass < $1.combiningClass }   // the standard library's sort is stable
        #expect(Self.nfc([0x78] + run.map(\.value)) == [0x78] + expected.map(\.value))
    }

    @Test("Text that passes the quick check is returned as it is; text that may change is not")
    func quickCheck() {
        #expect(UnicodeNFC.isQuickCheckYes("correct horse battery staple".unicodeScalars))
        #expect(UnicodeNFC.isQuickCheckYes("caf\u{E9} \u{AC01} \u{1F600}".unicodeScalars))
        #expect(!UnicodeNFC.isQuickCheckYes("cafe\u{301}".unicodeScalars))          // U+0301: NFC_QC=Maybe
        #expect(!UnicodeNFC.isQuickCheckYes("\u{212B}".unicodeScalars))              // U+212B: NFC_QC=No
        #expect(!UnicodeNFC.isQuickCheckYes("a\u{301}\u{316}".unicodeScalars))       // 230 before 220
        #expect(UnicodeNFC.utf8(of: "correct horse") == Array("correct horse".utf8))
        #expect(UnicodeNFC.utf8(of: "") == [])
        #expect(UnicodeNFC.normalize("".unicodeScalars) == [])
    }
}
