/// Unicode Normalization Form C (UAX #15, Unicode 15.0), written here over the data in `UnicodeNFCData`.
///
/// The standard library's `String._nfcCodeUnits`, which format version 1 normalises passwords with
/// (`Credential.normalizedPasswordBytes`, SPEC.md §5), is not NFC for some sequences: for U+0F40 U+0F80 U+0F73
/// it gives U+0F40 U+0F80 U+0F71 U+0F72 where NFC is U+0F40 U+0F71 U+0F80 U+0F72, because it does not reorder
/// the decomposition of U+0F73 among the other marks. An implementation that follows the standard would
/// derive a different key from such a password. This type follows the standard (it passes every line of
/// NormalizationTest.txt) so that a later format version can normalise with it; version 1 does not use it.
///
/// NFC is, in three steps (Unicode §3.11): the full canonical decomposition (Hangul syllables algorithmically,
/// §3.12), the canonical ordering of every run of non-starters by combining class (a stable sort), and the
/// canonical composition of each unblocked pair, left to right. Text that passes the NFC quick check is
/// already NFC and is returned as it is.
///
/// For example:
/// ```swift
/// UnicodeNFC.normalize("A\u{30A}".unicodeScalars)        // ["\u{C5}"]
/// UnicodeNFC.utf8(of: "\u{F40}\u{F80}\u{F73}")            // the UTF-8 of U+0F40 U+0F71 U+0F80 U+0F72
/// ```
enum UnicodeNFC {
    /// The Unicode version whose data this normalisation follows.
    static var unicodeVersion: String { UnicodeNFCData.unicodeVersion }

    /// The NFC form of a sequence of Unicode scalars.
    ///
    /// - Parameter scalars: The text, for example `string.unicodeScalars`.
    /// - Returns: Its NFC form; the scalars as they are if they pass the quick check.
    ///
    /// For example:
    /// ```swift
    /// UnicodeNFC.normalize("\u{212B}".unicodeScalars)         // ["\u{C5}"]: a singleton decomposes for good
    /// ```
    static func normalize(_ scalars: some Sequence<Unicode.Scalar>) -> [Unicode.Scalar] {
        let input = Array(scalars)
        return isQuickCheckYes(input) ? input : normalizeWithoutQuickCheck(input)
    }

    /// The NFC form of a sequence of Unicode scalars by the full algorithm, without the quick check that
    /// `normalize` tries first. The tests check that both paths agree, since the quick check alone would
    /// hide a wrong table entry for any text it passes.
    ///
    /// - Parameter scalars: The text.
    /// - Returns: Its NFC form, the same as `normalize(scalars)`.
    ///
    /// For example:
    /// ```swift
    /// UnicodeNFC.normalizeWithoutQuickCheck("caf\u{E9}".unicodeScalars)   // decomposes and recomposes U+00E9
    /// ```
    static func normalizeWithoutQuickCheck(_ scalars: some Sequence<Unicode.Scalar>) -> [Unicode.Scalar] {
        composedValues(of: scalars).map { Unicode.Scalar($0)! }
    }

    /// The UTF-8 encoding of the NFC form of a string.
    ///
    /// - Parameter string: The text, for example a password.
    /// - Returns: The UTF-8 bytes of its NFC form; the string's own bytes if it passes the quick check (all
    ///   ASCII text does).
    ///
    /// For example:
    /// ```swift
    /// UnicodeNFC.utf8(of: "e\u{301}")                         // [0xC3, 0xA9], the UTF-8 of U+00E9
    /// ```
    static func utf8(of string: String) -> [UInt8] {
        if isQuickCheckYes(string.unicodeScalars) { return Array(string.utf8) }
        let values = composedValues(of: string.unicodeScalars)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count)
        for value in values { appendUTF8(of: value, to: &bytes) }
        return bytes
    }

    /// Whether the NFC quick check (UAX #15 §9) says YES: the text is NFC as it is. NO and MAYBE both give
    /// `false`, and the caller normalises in full.
    ///
    /// - Parameter scalars: The text.
    /// - Returns: `true` if no scalar is NFC_QC=No or Maybe and the combining classes of every run of
    ///   non-starters are in canonical order.
    ///
    /// For example:
    /// ```swift
    /// UnicodeNFC.isQuickCheckYes("caf\u{E9}".unicodeScalars)   // true
    /// UnicodeNFC.isQuickCheckYes("cafe\u{301}".unicodeScalars)  // false: U+0301 may compose
    /// ```
    static func isQuickCheckYes(_ scalars: some Sequence<Unicode.Scalar>) -> Bool {
        let tables = UnicodeNFCTables.shared
        var lastClass: UInt8 = 0
        for scalar in scalars {
            // Below U+0300 every code point is a starter that is NFC_QC=Yes.
            guard scalar.value >= 0x300 else { lastClass = 0; continue }
            let properties = tables.properties(of: scalar.value)
            let combiningClass = properties.combiningClass
            if properties.isQuickCheckNo || properties.combinesWithPrevious { return false }
            if combiningClass != 0 && lastClass > combiningClass { return false }
            lastClass = combiningClass
        }
        return true
    }

    // MARK: - The three steps

    /// Decomposes, orders and composes `scalars`; returns the scalar values of the NFC form. Every value is an
    /// input scalar, a table entry, or a Hangul syllable or jamo: all are valid `Unicode.Scalar` values.
    private static func composedValues(of scalars: some Sequence<Unicode.Scalar>) -> [UInt32] {
        let tables = UnicodeNFCTables.shared
        var values = decomposedValues(of: scalars, tables)
        orderCanonically(&values, tables)
        compose(&values, tables)
        return values
    }

    /// The full canonical decomposition, not yet canonically ordered.
    private static func decomposedValues(of scalars: some Sequence<Unicode.Scalar>, _ tables: UnicodeNFCTables) -> [UInt32] {
        var values: [UInt32] = []
        values.reserveCapacity(scalars.underestimatedCount)
        for scalar in scalars {
            let value = scalar.value
            // Wraps for values below U+AC00, which then fail the bound: one comparison tests the range.
            let syllableIndex = value &- Hangul.syllableBase
            if syllableIndex < Hangul.syllableCount {
                values.append(Hangul.leadingBase + syllableIndex / Hangul.syllablesPerLeading)
                values.append(Hangul.vowelBase + (syllableIndex % Hangul.syllablesPerLeading) / Hangul.trailingCount)
                let trailing = syllableIndex % Hangul.trailingCount
                if trailing != 0 { values.append(Hangul.trailingBase + trailing) }
            } else if let decomposition = tables.decomposition(of: tables.properties(of: value)) {
                values += decomposition
            } else {
                values.append(value)
            }
        }
        return values
    }

    /// Sorts every run of non-starters by combining class, keeping the order of marks of equal class
    /// (the canonical ordering algorithm, Unicode §3.11 D109).
    private static func orderCanonically(_ values: inout [UInt32], _ tables: UnicodeNFCTables) {
        var keys: [UInt64] = []   // reused: one key per mark of a run
        var start = 0
        while start < values.count {
            guard tables.properties(of: values[start]).combiningClass != 0 else { start += 1; continue }
            var end = start + 1
            while end < values.count && tables.properties(of: values[end]).combiningClass != 0 { end += 1 }
            if end - start > 1 {
                // Key: class, then position in the run, then the value (21 bits). Keys are distinct, so any
                // sort is stable, and a run of any length sorts in n log n.
                keys.removeAll(keepingCapacity: true)
                for index in start..<end {
                    let combiningClass = UInt64(tables.properties(of: values[index]).combiningClass)
                    keys.append(combiningClass << 56 | UInt64(index - start) << 21 | UInt64(values[index]))
                }
                keys.sort()
                for (offset, key) in keys.enumerated() { values[start + offset] = UInt32(truncatingIfNeeded: key & 0x1F_FFFF) }
            }
            start = end
        }
    }

    /// Canonical composition (Unicode §3.11 D117), in place: each character is composed with the last starter
    /// before it unless it is blocked, that is unless some character between them is a starter or has a
    /// combining class at least its own.
    private static func compose(_ values: inout [UInt32], _ tables: UnicodeNFCTables) {
        var written = 0
        var starter: Int?   // where the last starter was written
        // The class of the last character written after that starter, -1 if there is none: since the marks
        // after a starter are in canonical order, a character is unblocked exactly if this is below its class
        // (a starter after a starter is unblocked only when adjacent).
        var lastClass = -1
        for index in values.indices {
            let value = values[index]
            let properties = tables.properties(of: value)
            let combiningClass = Int(properties.combiningClass)
            if let starter, lastClass < combiningClass, let composite = composite(values[starter], value, tables) {
                values[starter] = composite
                continue
            }
            if combiningClass == 0 {
                starter = written
                lastClass = -1
            } else {
                lastClass = combiningClass
            }
            values[written] = value
            written += 1
        }
        values.removeLast(values.count - written)
    }

    /// The primary composite of two characters, Hangul syllables included, or `nil`.
    private static func composite(_ first: UInt32, _ second: UInt32, _ tables: UnicodeNFCTables) -> UInt32? {
        // The subtractions wrap for values below their base, which then fail the bounds.
        let leadingIndex = first &- Hangul.leadingBase
        let vowelIndex = second &- Hangul.vowelBase
        if leadingIndex < Hangul.leadingCount && vowelIndex < Hangul.vowelCount {
            return Hangul.syllableBase + (leadingIndex * Hangul.vowelCount + vowelIndex) * Hangul.trailingCount
        }
        let syllableIndex = first &- Hangul.syllableBase
        let trailingIndex = second &- Hangul.trailingBase
        if syllableIndex < Hangul.syllableCount && syllableIndex % Hangul.trailingCount == 0
            && trailingIndex > 0 && trailingIndex < Hangul.trailingCount {
            return first + trailingIndex
        }
        return tables.composite(tables.properties(of: first), second)
    }

    /// Appends the UTF-8 encoding of a scalar value.
    private static func appendUTF8(of value: UInt32, to bytes: inout [UInt8]) {
        switch value {
        case ..<0x80:
            bytes.append(UInt8(value))
        case ..<0x800:
            bytes.append(UInt8(0xC0 | value >> 6))
            bytes.append(UInt8(0x80 | value & 0x3F))
        case ..<0x1_0000:
            bytes.append(UInt8(0xE0 | value >> 12))
            bytes.append(UInt8(0x80 | (value >> 6) & 0x3F))
            bytes.append(UInt8(0x80 | value & 0x3F))
        default:
            bytes.append(UInt8(0xF0 | value >> 18))
            bytes.append(UInt8(0x80 | (value >> 12) & 0x3F))
            bytes.append(UInt8(0x80 | (value >> 6) & 0x3F))
            bytes.append(UInt8(0x80 | value & 0x3F))
        }
    }

    /// The constants of Hangul syllable decomposition and composition (Unicode §3.12).
    private enum Hangul {
        static let syllableBase: UInt32 = 0xAC00
        static let leadingBase: UInt32 = 0x1100
        static let vowelBase: UInt32 = 0x1161
        /// One below the first trailing consonant: trailing index 0 means "no trailing consonant".
        static let trailingBase: UInt32 = 0x11A7
        static let leadingCount: UInt32 = 19
        static let vowelCount: UInt32 = 21
        static let trailingCount: UInt32 = 28
        static let syllablesPerLeading = vowelCount * trailingCount
        static let syllableCount = leadingCount * syllablesPerLeading
    }
}
