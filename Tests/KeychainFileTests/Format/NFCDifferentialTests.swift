import Foundation
import Testing
@testable import KeychainFile

/// The password normalisation (SPEC.md §5: UTF-8(NFC(password))) against Foundation's
/// `precomposedStringWithCanonicalMapping`, which the library used before it moved to FoundationEssentials.
///
/// The library now normalises with the standard library's `String._nfcCodeUnits`. The two agree on every
/// Unicode scalar on its own, and on sequences except in these patterns, where a password derives a different
/// key than under the Foundation-based builds (checked against Python's unicodedata, Unicode 14.0, while
/// writing this test):
/// - a precomposed Hangul LV syllable followed by a trailing jamo U+11A8–U+11C2: NFC composes the LVT
///   syllable, the standard library does, Foundation leaves the two apart;
/// - a leading and a vowel jamo followed by U+11A7: Foundation drops the U+11A7 (see `hangulFillerJamo`);
/// - U+0CCA followed by U+0CD5: NFC composes U+0CCB, the standard library does, Foundation does not.
/// In these Foundation (swift-corelibs-foundation's CFStringNormalize, on Linux) is not NFC: it gives
/// different results for canonically equivalent inputs, which NFC by definition never does; its NFC of its
/// own NFD of the input is NFC there, and the test checks the standard library against that.
/// - U+0F73, U+0F75 or U+0F81 (discouraged Tibetan vowel signs that decompose into non-starters) among other
///   combining marks: neither implementation reorders their decomposition canonically, and they are wrong in
///   different ways (the standard library can even compose across a blocking mark), so there is no oracle;
///   such sequences are only counted.
/// Any other difference fails the test.
@Suite("NFC: the standard library's normalisation against Foundation's")
struct NFCDifferentialTests {
    private static func foundationNFC(_ string: String) -> [UInt8] {
        Array(string.precomposedStringWithCanonicalMapping.utf8)
    }

    private static func hex(_ string: String) -> String {
        string.unicodeScalars.map { String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
    }

    @Test("Every Unicode scalar on its own (all planes, surrogates excepted) normalises as Foundation does")
    func everyScalar() {
        var checked = 0
        var differing: [String] = []
        for value in UInt32(0)...0x10_FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }   // nil exactly for the surrogates
            let string = String(Character(scalar))
            checked += 1
            if Credential.normalizedPasswordBytes(string) != Self.foundationNFC(string) { differing.append(Self.hex(string)) }
        }
        print("nfc-differential: \(checked) scalars on their own, \(differing.count) differ from Foundation")
        #expect(checked == 0x11_0000 - 0x800)
        #expect(differing.isEmpty, "\(differing.count) scalars differ, first: \(differing.prefix(20))")
    }

    /// Scalars the random sequences are drawn from: the four blocks of combining marks, Hangul jamo and
    /// syllables, scalars with singleton or multi-scalar canonical decompositions, and base letters (Latin,
    /// Greek, Cyrillic, Indic, Tibetan) that compose with the marks. UnicodeNFCStandardLibraryTests draws the
    /// same sequences.
    static let pools: [[UInt32]] = [
        Array(0x0300...0x036F), Array(0x1DC0...0x1DFF), Array(0x20D0...0x20FF), Array(0xFE20...0xFE2F),
        Array(0x1100...0x1112), Array(0x1161...0x1175), Array(0x11A8...0x11C2), Array(0xAC00...0xD7A3),
        [0x212B, 0x2126, 0x212A, 0x0344, 0x0340, 0x0341, 0x0343, 0x0374, 0x037E, 0x0387, 0x0F73, 0x0F75, 0x0F81,
         0x0F77, 0x0F79, 0x1E9B, 0x2000, 0x2001, 0x0958, 0xFB1D, 0x2ADC, 0x1D15E, 0x1D160, 0xF900, 0x2F800,
         0x093C, 0x0929, 0x09CB, 0x0B4B, 0x0BCA, 0x0CCA, 0x0CCB, 0x0DDA, 0x1B06, 0x110AB, 0x1134B, 0x114BB],
        Array(0x41...0x5A) + Array(0x61...0x7A)
            + [0xC5, 0xE9, 0xEA, 0x17F, 0x1A1, 0x1B0, 0x391, 0x3A9, 0x3B1, 0x3B9, 0x3C5, 0x3C9, 0x418, 0x438,
               0x928, 0x9C7, 0xB47, 0xBC6, 0xBBE, 0xCC6, 0xCC2, 0xCD5, 0xCBF, 0xDD9, 0xDCF, 0x1B05, 0x1B35,
               0x110A5, 0x110BA, 0x11347, 0x1133E, 0x114B9, 0x114BA, 0xF40, 0xF71, 0xF72, 0xF74, 0xF80, 0xFB2,
               0xFB3],
    ]

    /// Whether `scalars` holds U+0F73, U+0F75 or U+0F81, on which neither implementation is NFC (see the suite).
    private static func hasTibetanNonStarterDecomposition(_ scalars: [UInt32]) -> Bool {
        scalars.contains { [0x0F73, 0x0F75, 0x0F81].contains($0) }
    }

    /// Whether `scalars` holds a pattern that Foundation does not compose but NFC does (see the suite).
    private static func hasFoundationMissedComposition(_ scalars: [UInt32]) -> Bool {
        zip(scalars, scalars.dropFirst()).contains { scalar, next in
            let isLVSyllable = (0xAC00...0xD7A3).contains(scalar) && (scalar - 0xAC00) % 28 == 0
            return (isLVSyllable && (0x11A8...0x11C2).contains(next)) || (scalar == 0x0CCA && next == 0x0CD5)
        }
    }

    @Test("60,000 seeded random sequences of marks, jamo, syllables and decomposing scalars normalise as Foundation does")
    func randomSequences() {
        var generator = TestRandom(seed: 0x4E46_4300)
        var agreed = 0
        var missedByFoundation = 0
        var tibetan = 0
        var failures: [String] = []
        for _ in 0..<60_000 {
            var scalars: [UInt32] = []
            for _ in 0..<Int.random(in: 1...16, using: &generator) {
                let pool = Self.pools[Int.random(in: 0..<Self.pools.count, using: &generator)]
                scalars.append(pool[Int.random(in: 0..<pool.count, using: &generator)])
            }
            let string = String(String.UnicodeScalarView(scalars.map { Unicode.Scalar($0)! }))
            let ours = Credential.normalizedPasswordBytes(string)
            if ours == Self.foundationNFC(string) {
                agreed += 1
            } else if Self.hasTibetanNonStarterDecomposition(scalars) {
                tibetan += 1
            } else {
                // Foundation's NFC of its own NFD of the input (canonically equivalent) is NFC here.
                missedByFoundation += 1
                let viaDecomposition = Self.foundationNFC(string.decomposedStringWithCanonicalMapping)
                if ours != viaDecomposition || !Self.hasFoundationMissedComposition(scalars) {
                    failures.append("\(Self.hex(string)) → ours \(Self.hex(String(decoding: ours, as: UTF8.self))), "
                        + "Foundation \(Self.hex(string.precomposedStringWithCanonicalMapping)), "
                        + "Foundation via NFD \(Self.hex(String(decoding: viaDecomposition, as: UTF8.self)))")
                }
            }
        }
        print("nfc-differential: 60000 sequences: \(agreed) agree with Foundation, \(missedByFoundation) differ where "
            + "Foundation misses a composition, \(tibetan) differ with U+0F73/0F75/0F81, \(failures.count) other")
        #expect(failures.isEmpty, "\(failures.count) sequences differ, first: \(failures.prefix(10))")
        // Agreement must dominate and the known patterns must occur, or the sequences test too little.
        #expect(agreed > 55_000)
        #expect(missedByFoundation > 0)
    }

    /// U+11A7 is a trailing jamo, but Unicode's Hangul composition (§3.12) composes an LV syllable only with
    /// U+11A8–U+11C2 (TIndex 1–27); U+11A7 (TIndex 0) stays a scalar of its own. Foundation drops it.
    @Test("A leading and a vowel jamo then U+11A7 (all 399 pairs) compose the LV syllable and keep the U+11A7")
    func hangulFillerJamo() {
        var failures: [String] = []
        for leading in UInt32(0x1100)...0x1112 {
            for vowel in UInt32(0x1161)...0x1175 {
                let pair = String(String.UnicodeScalarView([leading, vowel].map { Unicode.Scalar($0)! }))
                let expected = Self.foundationNFC(pair) + Array("\u{11A7}".utf8)
                let ours = Credential.normalizedPasswordBytes(pair + "\u{11A7}")
                if ours != expected { failures.append(Self.hex(pair)) }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) pairs differ, first: \(failures.prefix(10))")
    }
}
