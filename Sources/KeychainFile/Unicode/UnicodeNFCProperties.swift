/// What canonical normalisation needs to know about one code point, packed in 32 bits so that a single table
/// lookup answers every question `UnicodeNFC` asks of a scalar.
///
/// Bits 0–7 hold the canonical combining class; bits 8–19 the decomposition slot and bits 20–29 the
/// composition slot (both 1-based indices into `UnicodeNFCTables`' arrays, 0 for none); bit 30 says the
/// code point may compose with a preceding one (NFC_QC=Maybe) and bit 31 that it never appears in NFC
/// (NFC_QC=No: it decomposes and does not recompose).
///
/// For example, U+0301 COMBINING ACUTE ACCENT has class 230, no decomposition, no composition slot of its
/// own, and combines with a preceding "e" to U+00E9:
/// ```swift
/// let acute = UnicodeNFCTables.shared.properties(of: 0x0301)
/// // acute.combiningClass == 230, acute.combinesWithPrevious == true
/// ```
struct UnicodeNFCProperties: Sendable, Equatable {
    /// The packed bits, as stored in the lookup table.
    var rawValue: UInt32

    /// The largest decomposition slot the 12 bits hold.
    static let maximumDecompositionSlot = 0xFFF
    /// The largest composition slot the 10 bits hold.
    static let maximumCompositionSlot = 0x3FF

    private static let combinesWithPreviousBit: UInt32 = 1 << 30
    private static let quickCheckNoBit: UInt32 = 1 << 31

    /// Properties from their packed bits.
    init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// The canonical combining class (ccc); 0 for starters.
    var combiningClass: UInt8 {
        get { UInt8(truncatingIfNeeded: rawValue) }
        set { rawValue = (rawValue & ~0xFF) | UInt32(newValue) }
    }

    /// The 1-based index of the code point's full canonical decomposition, 0 if it has none (or is a Hangul
    /// syllable, which decomposes algorithmically).
    var decompositionSlot: Int {
        get { Int((rawValue >> 8) & 0xFFF) }
        set {
            precondition(newValue <= Self.maximumDecompositionSlot)
            rawValue = (rawValue & ~(0xFFF << 8)) | UInt32(newValue) << 8
        }
    }

    /// The 1-based index of the pairs in which the code point is the first character, 0 if it is in none.
    var compositionSlot: Int {
        get { Int((rawValue >> 20) & 0x3FF) }
        set {
            precondition(newValue <= Self.maximumCompositionSlot)
            rawValue = (rawValue & ~(0x3FF << 20)) | UInt32(newValue) << 20
        }
    }

    /// Whether the code point is the second character of a composition pair (or a Hangul vowel or trailing
    /// jamo), so that it may compose with what precedes it.
    var combinesWithPrevious: Bool {
        get { rawValue & Self.combinesWithPreviousBit != 0 }
        set { rawValue = newValue ? rawValue | Self.combinesWithPreviousBit : rawValue & ~Self.combinesWithPreviousBit }
    }

    /// Whether the code point cannot occur in NFC text: it has a canonical decomposition but is not a primary
    /// composite (a composition exclusion, a singleton or a non-starter decomposition).
    var isQuickCheckNo: Bool {
        get { rawValue & Self.quickCheckNoBit != 0 }
        set { rawValue = newValue ? rawValue | Self.quickCheckNoBit : rawValue & ~Self.quickCheckNoBit }
    }
}
