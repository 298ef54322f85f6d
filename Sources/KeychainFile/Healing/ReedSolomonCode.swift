/// A systematic Reed–Solomon code over GF(2⁸) with a chosen number of parity symbols: the building block
/// of self-healing parity (the parity only proposes repairs; the AES-GCM tags decide whether they are right).
///
/// A codeword is the data followed by its parity, at most 255 bytes. Read as a polynomial its first byte
/// is the highest-degree coefficient: C(x) = Σ cₚ·x^(N−1−p) for a codeword of N bytes. The parity is
/// data(x)·xⁿ mod g(x) with the generator g(x) = (x − α⁰)(x − α¹)…(x − αⁿ⁻¹), so every codeword has the
/// roots α⁰…αⁿ⁻¹ ("first consecutive root" 0). Shorter data gives a shortened code: the same parity as
/// the data with zero bytes in front. These are the conventions of Python's `reedsolo` with its defaults
/// (`prim=0x11d, generator=2, fcr=0`), which the differential test vectors come from.
///
/// With n parity symbols, `correct(codeword:erasures:)` repairs any mix of e errors at unknown positions and
/// f erasures at known positions with 2e + f ≤ n, and refuses (without changing the codeword) what it
/// finds uncorrectable. Beyond that bound no decoder can be sure: damage can turn a codeword into one that
/// lies within reach of another codeword, and then the decoder returns that other, valid, codeword.
///
/// Package-visible so that `kcf-bench` can time it; format version 2's parity (`ChunkParity`, `HeaderPage`) uses it.
///
/// For example:
///
///     let code = try ReedSolomonCode(paritySymbols: 32)
///     var codeword = data + (try code.parity(of: data))     // data: at most 223 bytes
///     codeword[7] ^= 0xFF                                   // damage
///     let repaired = try code.correct(codeword: &codeword)  // [7]
package struct ReedSolomonCode: Sendable {
    /// n: the number of parity symbols, 2...254.
    package let paritySymbols: Int

    /// g(x)'s n + 1 coefficients, highest degree first; the first is 1.
    let generatorPolynomial: [UInt8]

    /// The divider that computes parity and the decoder's remainders.
    let tables: ReedSolomonParityTables

    /// The longest codeword: 255 bytes, the length of the multiplicative group of GF(2⁸).
    package static let maximumCodewordLength = 255

    /// The longest data a codeword can hold: 255 − n.
    package var maximumDataLength: Int { Self.maximumCodewordLength - paritySymbols }

    /// Makes the code with `paritySymbols` parity symbols; its tables are built here, once.
    ///
    /// - Parameter paritySymbols: n, 2...254. The code corrects e errors and f erasures with 2e + f ≤ n.
    /// - Throws: `ReedSolomonError.unsupportedParitySymbolCount` outside 2...254.
    package init(paritySymbols: Int) throws(ReedSolomonError) {
        guard (2...254).contains(paritySymbols) else { throw .unsupportedParitySymbolCount(paritySymbols) }
        self.paritySymbols = paritySymbols
        // g(x) = Π (x + αⁱ), multiplied out one factor at a time, coefficients highest degree first.
        var generator: [UInt8] = [1]
        for i in 0..<paritySymbols {
            let root = GaloisField256.alphaPower(i)
            var product = generator + [0]
            for j in 0..<generator.count { product[j + 1] ^= GaloisField256.multiply(generator[j], root) }
            generator = product
        }
        generatorPolynomial = generator
        tables = ReedSolomonParityTables(generator: generator)
    }

    /// The parity of `data`: n bytes to append to it to make a codeword.
    ///
    /// - Parameter data: 0 to `maximumDataLength` bytes.
    /// - Returns: the `paritySymbols` parity bytes.
    /// - Throws: `ReedSolomonError.dataTooLong` when the data does not fit one codeword.
    package func parity(of data: some Collection<UInt8>) throws(ReedSolomonError) -> [UInt8] {
        let length = data.count
        guard length <= maximumDataLength else { throw .dataTooLong(length: length, maximum: maximumDataLength) }
        let n = paritySymbols
        return [UInt8](unsafeUninitializedCapacity: n) { output, initialized in
            let parity = UnsafeMutableRawBufferPointer(output)
            let done: Void? = data.withContiguousStorageIfAvailable { bytes in
                tables.remainder(of: UnsafeRawBufferPointer(bytes), into: parity)
            }
            if done == nil {
                Array(data).withUnsafeBytes { tables.remainder(of: $0, into: parity) }
            }
            initialized = n
        }
    }

    /// Writes the parity of `data` into `parity`, allocating nothing: the form for encoding whole files.
    ///
    /// - Parameters:
    ///   - data: 0 to `maximumDataLength` bytes.
    ///   - parity: exactly `paritySymbols` bytes, overwritten.
    /// - Throws: `ReedSolomonError.dataTooLong`, or `.parityBufferLength` when `parity` has the wrong size.
    package func parity(of data: UnsafeRawBufferPointer, into parity: UnsafeMutableRawBufferPointer) throws(ReedSolomonError) {
        guard data.count <= maximumDataLength else { throw .dataTooLong(length: data.count, maximum: maximumDataLength) }
        guard parity.count == paritySymbols else { throw .parityBufferLength(length: parity.count, expected: paritySymbols) }
        tables.remainder(of: data, into: parity)
    }

    /// Whether `codeword` (data followed by parity) is a codeword of this code: its parity matches its data.
    ///
    /// - Throws: `ReedSolomonError.invalidCodewordLength` when it is shorter than the parity or longer than 255.
    package func isCodeword(_ codeword: [UInt8]) throws(ReedSolomonError) -> Bool {
        try checkLength(of: codeword)
        return remainder(of: codeword).allSatisfy { $0 == 0 }
    }

    /// Throws unless `codeword.count` is in n...255.
    func checkLength(of codeword: [UInt8]) throws(ReedSolomonError) {
        guard codeword.count >= paritySymbols && codeword.count <= Self.maximumCodewordLength else {
            throw .invalidCodewordLength(
                length: codeword.count, minimum: paritySymbols, maximum: Self.maximumCodewordLength)
        }
    }

    /// C(x) mod g(x) for a codeword of checked length, n coefficients highest degree first: all zero exactly
    /// when C is a codeword. It is the parity recomputed from the data part XOR the received parity.
    func remainder(of codeword: [UInt8]) -> [UInt8] {
        let dataLength = codeword.count - paritySymbols
        var remainder = [UInt8](repeating: 0, count: paritySymbols)
        codeword.withUnsafeBytes { bytes in
            remainder.withUnsafeMutableBytes { output in
                tables.remainder(of: UnsafeRawBufferPointer(rebasing: bytes[..<dataLength]), into: output)
            }
        }
        for i in 0..<paritySymbols { remainder[i] ^= codeword[dataLength + i] }
        return remainder
    }
}
