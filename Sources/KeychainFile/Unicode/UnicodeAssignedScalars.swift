/// The code points whose normal form no later Unicode version can change: those Unicode 15.0 assigns, and the
/// noncharacters (`UnicodeNFCData.assignedRanges`). A password made of them derives the same key under every
/// later version of the standard; one with a code point outside them might not, so a version 2 writer refuses
/// it for a new key slot (Docs/FormatVersion2.md §6).
///
/// The data is generated, not input: a malformed token is a bug in the generator, and decoding traps on it.
///
/// ```swift
/// UnicodeAssignedScalars.contains(0x1FAE8)                 // true: assigned in Unicode 15.0
/// UnicodeAssignedScalars.firstUnassigned(in: "a\u{378}")   // U+0378
/// ```
enum UnicodeAssignedScalars {
    /// The runs, ascending and disjoint, decoded once at first use.
    static let ranges: [ClosedRange<UInt32>] = {
        let bytes = UnicodeNFCData.assignedRanges.withUTF8Buffer { Array($0) }
        var ranges: [ClosedRange<UInt32>] = []
        for token in bytes.split(whereSeparator: { $0 == 0x20 || $0 == 0x0A }) {
            let parts = token.split(separator: 0x2E, omittingEmptySubsequences: true)
            precondition(parts.count == 2, "UnicodeNFCData.assignedRanges: malformed token")
            let low = hexValue(parts[0]), high = hexValue(parts[1])
            precondition(low <= high && (ranges.last.map { $0.upperBound < low } ?? true), "UnicodeNFCData.assignedRanges: unordered")
            ranges.append(low...high)
        }
        precondition(ranges.count == UnicodeNFCData.counts.assignedRanges, "UnicodeNFCData: assigned ranges miscounted")
        return ranges
    }()

    /// Whether `value` is assigned in Unicode 15.0 or is a noncharacter.
    static func contains(_ value: UInt32) -> Bool {
        var low = 0, high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < value { low = middle + 1 } else { high = middle }
        }
        return low < ranges.count && ranges[low].contains(value)
    }

    /// The first scalar of `text` that Unicode 15.0 does not assign (and is not a noncharacter), if any.
    static func firstUnassigned(in text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first { !contains($0.value) }
    }

    private static func hexValue(_ digits: ArraySlice<UInt8>) -> UInt32 {
        digits.reduce(0) { value, digit in
            switch digit {
            case 0x30...0x39: return value << 4 | UInt32(digit - 0x30)
            case 0x41...0x46: return value << 4 | UInt32(digit - 0x41 + 10)
            default: preconditionFailure("UnicodeNFCData.assignedRanges: not a hexadecimal digit")
            }
        }
    }
}
