/// The lookup tables of canonical normalisation, decoded once from `UnicodeNFCData`'s text at first use.
///
/// A two-stage table maps each code point to its `UnicodeNFCProperties`: the first stage, indexed by the code
/// point's upper bits, names a block of 128 entries in the second; blocks with the same content are stored
/// once, so the many code points without properties share one block of zeros. The decompositions and the
/// composition pairs live in flat arrays that the properties' slots index.
///
/// The data is generated, not input: a malformed token is a bug in the generator, and decoding traps on it
/// (the tests decode the tables on their first use).
///
/// For example:
/// ```swift
/// let tables = UnicodeNFCTables.shared
/// tables.decomposition(of: tables.properties(of: 0x00C5))   // [0x41, 0x30A]
/// tables.composite(0x41, 0x30A)                              // 0xC5
/// ```
struct UnicodeNFCTables: Sendable {
    /// The tables, decoded on first use (a `static let` is initialised once, thread-safely).
    static let shared = UnicodeNFCTables()

    /// Code points per block of the second stage.
    private static let blockShift: UInt32 = 7
    private static let blockSize = 1 << blockShift

    /// The first stage: for each block of code points, the index of its block in `blocks`.
    private let blockIndex: [UInt16]
    /// The second stage: blocks of `blockSize` packed properties; block 0 is all zeros.
    private let blocks: [UInt32]
    /// Decomposition slot `s` (1-based) is `decompositionScalars[decompositionBounds[s - 1] ..< decompositionBounds[s]]`.
    private let decompositionBounds: [Int32]
    private let decompositionScalars: [UInt32]
    /// Composition slot `s` (1-based) covers `compositionBounds[s - 1] ..< compositionBounds[s]` of the two
    /// arrays below: the second characters that compose with its first character, ascending, and the
    /// composites they make.
    private let compositionBounds: [Int32]
    private let compositionSeconds: [UInt32]
    private let compositionComposites: [UInt32]

    /// The properties of a code point (a Unicode scalar value, at most U+10FFFF).
    @inline(__always)
    func properties(of value: UInt32) -> UnicodeNFCProperties {
        let block = Int(blockIndex[Int(value >> Self.blockShift)])
        return UnicodeNFCProperties(rawValue: blocks[block << Self.blockShift | Int(value & UInt32(Self.blockSize - 1))])
    }

    /// The full canonical decomposition of the code point with `properties`, or `nil` if it has none.
    @inline(__always)
    func decomposition(of properties: UnicodeNFCProperties) -> ArraySlice<UInt32>? {
        let slot = properties.decompositionSlot
        guard slot != 0 else { return nil }
        return decompositionScalars[Int(decompositionBounds[slot - 1]) ..< Int(decompositionBounds[slot])]
    }

    /// The primary composite of `first` (with `firstProperties`) and `second`, or `nil` if the pair does not
    /// compose. Hangul syllables are not in the tables; `UnicodeNFC` composes them in code.
    @inline(__always)
    func composite(_ first: UnicodeNFCProperties, _ second: UInt32) -> UInt32? {
        let slot = first.compositionSlot
        guard slot != 0 else { return nil }
        // A first character pairs with few seconds (at most 19 in Unicode 15.0): a linear search is enough.
        for index in Int(compositionBounds[slot - 1]) ..< Int(compositionBounds[slot]) where compositionSeconds[index] == second {
            return compositionComposites[index]
        }
        return nil
    }

    /// The primary composite of two code points, or `nil`.
    func composite(_ first: UInt32, _ second: UInt32) -> UInt32? {
        composite(properties(of: first), second)
    }

    /// Decodes `UnicodeNFCData`.
    private init() {
        var properties: [Int: [UInt32]] = [:]   // block number → its entries, for blocks with any
        func update(_ value: UInt32, _ change: (inout UnicodeNFCProperties) -> Void) {
            let block = Int(value >> Self.blockShift)
            let offset = Int(value) & (Self.blockSize - 1)
            var entry = UnicodeNFCProperties(rawValue: properties[block]?[offset] ?? 0)
            change(&entry)
            properties[block, default: Array(repeating: 0, count: Self.blockSize)][offset] = entry.rawValue
        }

        var classCount = 0
        for (key, value) in Self.tokens(UnicodeNFCData.canonicalCombiningClasses) {
            let range = Self.codePointRange(key)
            guard let combiningClass = UInt8(String(decoding: value, as: UTF8.self)), combiningClass != 0 else {
                preconditionFailure("UnicodeNFCData: bad combining class in \(String(decoding: key + value, as: UTF8.self))")
            }
            for code in range { update(code) { $0.combiningClass = combiningClass } }
            classCount += 1
        }

        var decompositionBounds: [Int32] = [0]
        var decompositionScalars: [UInt32] = []
        var decomposing: [UInt32] = []
        for (key, value) in Self.tokens(UnicodeNFCData.canonicalDecompositions) {
            let code = Self.codePoint(key)
            decompositionScalars += Self.codePoints(value)
            decompositionBounds.append(Int32(decompositionScalars.count))
            let slot = decompositionBounds.count - 1
            update(code) { $0.decompositionSlot = slot }
            decomposing.append(code)
        }

        var compositionBounds: [Int32] = [0]
        var compositionSeconds: [UInt32] = []
        var compositionComposites: [UInt32] = []
        var composites = Set<UInt32>()
        var previousFirst: UInt32?
        for (key, value) in Self.tokens(UnicodeNFCData.compositionPairs) {
            let pair = Self.codePoints(key)
            precondition(pair.count == 2, "UnicodeNFCData: a composition pair of \(pair.count)")
            let (first, second, composite) = (pair[0], pair[1], Self.codePoint(value))
            if first != previousFirst {   // the pairs are sorted by their first character
                if previousFirst != nil { compositionBounds.append(Int32(compositionSeconds.count)) }
                previousFirst = first
                let slot = compositionBounds.count
                update(first) { $0.compositionSlot = slot }
            }
            compositionSeconds.append(second)
            compositionComposites.append(composite)
            composites.insert(composite)
            update(second) { $0.combinesWithPrevious = true }
        }
        compositionBounds.append(Int32(compositionSeconds.count))

        // Hangul vowels and trailing consonants compose with what precedes them (Unicode §3.12); U+11A7 does not.
        for code in UInt32(0x1161)...0x1175 { update(code) { $0.combinesWithPrevious = true } }
        for code in UInt32(0x11A8)...0x11C2 { update(code) { $0.combinesWithPrevious = true } }
        // A character that decomposes and is not a primary composite never recomposes (NFC_QC=No).
        for code in decomposing where !composites.contains(code) { update(code) { $0.isQuickCheckNo = true } }

        let counts = UnicodeNFCData.counts
        precondition(classCount == counts.canonicalCombiningClasses, "UnicodeNFCData: combining classes miscounted")
        precondition(decomposing.count == counts.canonicalDecompositions, "UnicodeNFCData: decompositions miscounted")
        precondition(compositionSeconds.count == counts.compositionPairs, "UnicodeNFCData: composition pairs miscounted")

        // The two stages; blocks with equal content are stored once.
        let zeros = [UInt32](repeating: 0, count: Self.blockSize)
        var blockIndex = [UInt16](repeating: 0, count: 0x11_0000 >> Int(Self.blockShift))
        var blocks = zeros
        var stored: [[UInt32]: UInt16] = [zeros: 0]
        for (block, entries) in properties.sorted(by: { $0.key < $1.key }) {
            if let index = stored[entries] {
                blockIndex[block] = index
            } else {
                let index = UInt16(stored.count)
                stored[entries] = index
                blocks += entries
                blockIndex[block] = index
            }
        }

        self.blockIndex = blockIndex
        self.blocks = blocks
        self.decompositionBounds = decompositionBounds
        self.decompositionScalars = decompositionScalars
        self.compositionBounds = compositionBounds
        self.compositionSeconds = compositionSeconds
        self.compositionComposites = compositionComposites
    }

    /// The `key=value` tokens of a literal, split on spaces and newlines.
    private static func tokens(_ literal: StaticString) -> [(key: ArraySlice<UInt8>, value: ArraySlice<UInt8>)] {
        let bytes = literal.withUTF8Buffer { Array($0) }
        return bytes.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") }).map { token in
            guard let equals = token.firstIndex(of: UInt8(ascii: "=")) else {
                preconditionFailure("UnicodeNFCData: a token without '=': \(String(decoding: token, as: UTF8.self))")
            }
            return (token[..<equals], token[(equals + 1)...])
        }
    }

    /// One hexadecimal code point.
    private static func codePoint(_ text: ArraySlice<UInt8>) -> UInt32 {
        guard let value = UInt32(String(decoding: text, as: UTF8.self), radix: 16), Unicode.Scalar(value) != nil else {
            preconditionFailure("UnicodeNFCData: not a code point: \(String(decoding: text, as: UTF8.self))")
        }
        return value
    }

    /// Hexadecimal code points joined by "+".
    private static func codePoints(_ text: ArraySlice<UInt8>) -> [UInt32] {
        text.split(separator: UInt8(ascii: "+")).map(codePoint)
    }

    /// `XXXX` or `XXXX..YYYY`.
    private static func codePointRange(_ text: ArraySlice<UInt8>) -> ClosedRange<UInt32> {
        let parts = text.split(separator: UInt8(ascii: "."))
        let low = codePoint(parts[parts.startIndex])
        let high = parts.count == 2 ? codePoint(parts[parts.startIndex + 1]) : low
        precondition(parts.count <= 2 && low <= high, "UnicodeNFCData: bad range")
        return low...high
    }
}
