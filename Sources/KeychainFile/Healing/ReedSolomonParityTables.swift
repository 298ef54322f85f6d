/// The remainder of a message divided by a Reed–Solomon generator polynomial, eight message bytes a step:
/// the systematic encoder's parity and, for a received codeword, the check the decoder starts from.
///
/// The division is a linear feedback shift register over GF(2⁸). Run a byte at a time it costs one
/// dependent table look-up per parity symbol per byte; here it runs eight bytes at a time ("slicing by
/// eight", as CRC-32 does), using that the register is linear. With the register R(x) (degree < n) and
/// eight message bytes m₀…m₇:
///
///     R(x)·x⁸ + M(x)·xⁿ  =  Σⱼ vⱼ·x^(n+7−j)  +  R_low(x)·x⁸,     vⱼ = mⱼ ⊕ rⱼ  (rⱼ = 0 for j ≥ n)
///
/// where R_low holds R's coefficients below its top eight. So the new register is R_low shifted up by eight
/// bytes — a move of whole 64-bit words — plus, for each of the eight bytes vⱼ, a precomputed row
/// vⱼ·(x^(n+7−j) mod g(x)): eight look-ups and XORs of ⌈n/8⌉ words each, independent of one another.
/// Message bytes left over after the last whole step go through the byte-at-a-time register.
///
/// Register layout: coefficient i (of x^(n−1−i)), the next to leave the register first, is byte i of the
/// register read as little-endian 64-bit words; bytes at n and beyond are always zero. Message bytes are
/// read as little-endian words for the same reason, so the layout is the same on every host.
struct ReedSolomonParityTables: Sendable {
    /// n, the number of parity symbols: the degree of the generator polynomial.
    let paritySymbols: Int

    /// ⌈n/8⌉: the 64-bit words a register or a row takes.
    let wordCount: Int

    /// Row (slice j, value v) at word offset ((j << 8) | v) · wordCount: v·(x^(n+7−j) mod g(x)) in the
    /// register layout. Slice 7, x^n mod g, is also the byte-at-a-time register's feedback row.
    private let rows: [UInt64]

    /// Builds the rows for a generator polynomial.
    ///
    /// - Parameter generator: g(x)'s n + 1 coefficients, highest degree first; the first is 1 (g is monic).
    init(generator: [UInt8]) {
        let n = generator.count - 1
        precondition(n >= 1 && n <= 254 && generator[0] == 1, "a monic generator of degree 1...254")
        paritySymbols = n
        let words = (n + 7) / 8
        wordCount = words
        // remainders[d] = x^(n+d) mod g(x) for d in 0...7, n coefficients highest degree first.
        var remainders: [[UInt8]] = [Array(generator[1...])]
        for _ in 1..<8 {
            let previous = remainders[remainders.count - 1]
            let lead = previous[0]
            var next = [UInt8](repeating: 0, count: n)
            for i in 0..<n {
                let shifted = i + 1 < n ? previous[i + 1] : 0
                next[i] = shifted ^ GaloisField256.multiply(lead, generator[i + 1])
            }
            remainders.append(next)
        }
        var table = [UInt64](repeating: 0, count: 8 * 256 * words)
        for slice in 0..<8 {
            let remainder = remainders[7 - slice]
            for value in 1..<256 {
                let base = ((slice << 8) | value) * words
                for i in 0..<n {
                    let product = UInt64(GaloisField256.multiply(UInt8(value), remainder[i]))
                    table[base + (i >> 3)] |= product << UInt64((i & 7) * 8)
                }
            }
        }
        rows = table
    }

    /// Writes data(x)·xⁿ mod g(x), the n parity symbols of `data` highest degree first, into `output`.
    ///
    /// - Parameters:
    ///   - data: the message bytes, first byte highest degree; any length (the caller bounds it).
    ///   - output: exactly `paritySymbols` bytes.
    func remainder(of data: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count == paritySymbols, "the caller checks the parity buffer's length")
        rows.withUnsafeBufferPointer { rows in
            switch wordCount {
            // Constant widths, so that each inlined copy drops the work of the words it does not use.
            case 1: Self.divide(words: 1, data, rows.baseAddress!, paritySymbols, output)
            case 2: Self.divide(words: 2, data, rows.baseAddress!, paritySymbols, output)
            case 3: Self.divide(words: 3, data, rows.baseAddress!, paritySymbols, output)
            case 4: Self.divide(words: 4, data, rows.baseAddress!, paritySymbols, output)
            default: Self.divideWide(data, rows.baseAddress!, paritySymbols, wordCount, output)
            }
        }
    }

    // MARK: - The register loops: the only unsafe pointer code of the codec.
    //
    // Bounds, for all three functions: a row index is ((slice << 8) | byte) · words + word with slice < 8,
    // byte < 256 and word < words, so it stays inside the 8 · 256 · words words of `rows`; message loads
    // are at offsets with offset + 8 ≤ data.count (words) or offset < data.count (bytes); `output` is
    // written at indices below n, and the caller checked it holds n bytes.

    /// The register for n ≤ 32 in four local words; the words at `words` and beyond stay zero. Always
    /// inlined and called with a constant `words`, so each copy keeps only the work its width needs.
    @inline(__always)
    private static func divide(
        words: Int, _ data: UnsafeRawBufferPointer, _ rows: UnsafePointer<UInt64>, _ n: Int,
        _ output: UnsafeMutableRawBufferPointer
    ) {
        var s0: UInt64 = 0, s1: UInt64 = 0, s2: UInt64 = 0, s3: UInt64 = 0
        if let bytes = data.baseAddress {
            let count = data.count
            var offset = 0
            while count - offset >= 8 {
                let v = s0 ^ UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                s0 = s1
                s1 = s2
                s2 = s3
                s3 = 0
                for slice in 0..<8 {
                    let row = rows + ((slice << 8) | Int(truncatingIfNeeded: (v >> UInt64(slice * 8)) & 0xFF)) * words
                    s0 ^= row[0]
                    if words > 1 { s1 ^= row[1] }
                    if words > 2 { s2 ^= row[2] }
                    if words > 3 { s3 ^= row[3] }
                }
                offset += 8
            }
            let feedback = rows + (7 << 8) * words
            while offset < count {
                let v = UInt8(truncatingIfNeeded: s0) ^ bytes.load(fromByteOffset: offset, as: UInt8.self)
                s0 = s0 >> 8 | s1 << 56
                s1 = s1 >> 8 | s2 << 56
                s2 = s2 >> 8 | s3 << 56
                s3 = s3 >> 8
                let row = feedback + Int(v) * words
                s0 ^= row[0]
                if words > 1 { s1 ^= row[1] }
                if words > 2 { s2 ^= row[2] }
                if words > 3 { s3 ^= row[3] }
                offset += 1
            }
        }
        for i in 0..<n {
            let word = i < 8 ? s0 : i < 16 ? s1 : i < 24 ? s2 : s3
            output[i] = UInt8(truncatingIfNeeded: word >> UInt64((i & 7) * 8))
        }
    }

    /// The register for n > 32, in a temporary buffer of `words` words.
    private static func divideWide(
        _ data: UnsafeRawBufferPointer, _ rows: UnsafePointer<UInt64>, _ n: Int, _ words: Int,
        _ output: UnsafeMutableRawBufferPointer
    ) {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: words) { state in
            state.initialize(repeating: 0)
            if let bytes = data.baseAddress {
                let count = data.count
                var offset = 0
                while count - offset >= 8 {
                    let v = state[0] ^ UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                    for word in 0..<(words - 1) { state[word] = state[word + 1] }
                    state[words - 1] = 0
                    for slice in 0..<8 {
                        let row = rows + ((slice << 8) | Int(truncatingIfNeeded: (v >> UInt64(slice * 8)) & 0xFF)) * words
                        for word in 0..<words { state[word] ^= row[word] }
                    }
                    offset += 8
                }
                let feedback = rows + (7 << 8) * words
                while offset < count {
                    let v = UInt8(truncatingIfNeeded: state[0]) ^ bytes.load(fromByteOffset: offset, as: UInt8.self)
                    for word in 0..<(words - 1) { state[word] = state[word] >> 8 | state[word + 1] << 56 }
                    state[words - 1] >>= 8
                    let row = feedback + Int(v) * words
                    for word in 0..<words { state[word] ^= row[word] }
                    offset += 1
                }
            }
            for i in 0..<n { output[i] = UInt8(truncatingIfNeeded: state[i >> 3] >> UInt64((i & 7) * 8)) }
            state.deinitialize()
        }
    }
}
