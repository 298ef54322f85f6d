/// Why a Reed–Solomon operation refused its input or could not correct a codeword.
///
/// Every case but `tooManyErrors` is a mistake of the caller — a length or a position that does not fit
/// the code — and says which value was wrong and what was allowed. `tooManyErrors` is the data's fault:
/// the codeword is damaged beyond what its parity can repair, and it was left as it was.
package enum ReedSolomonError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Thrown when a code is asked for a number of parity symbols outside 2...254.
    case unsupportedParitySymbolCount(Int)

    /// Thrown when data to encode is longer than the code allows (255 minus the parity symbols).
    case dataTooLong(length: Int, maximum: Int)

    /// Thrown when a codeword is shorter than its parity or longer than 255 bytes.
    case invalidCodewordLength(length: Int, minimum: Int, maximum: Int)

    /// Thrown when the buffer given for the parity is not exactly as long as the parity.
    case parityBufferLength(length: Int, expected: Int)

    /// Thrown when an erasure position is not an index of the codeword.
    case erasureOutOfRange(position: Int, codewordLength: Int)

    /// Thrown when one position is named as an erasure more than once.
    case repeatedErasure(position: Int)

    /// Thrown when more positions are named as erasures than there are parity symbols.
    case tooManyErasures(count: Int, maximum: Int)

    /// Thrown when the codeword holds more damage than its parity can repair: 2 × errors + erasures is
    /// above the number of parity symbols (or the decoder met a pattern it cannot have come from a
    /// correctable one). The codeword is left unchanged.
    case tooManyErrors

    /// Thrown by the interleaver when its data or parity block does not have the length its layout needs.
    case invalidBlockLength(length: Int, expected: String)

    package var description: String {
        switch self {
        case .unsupportedParitySymbolCount(let count):
            "a Reed–Solomon code over GF(2^8) needs 2 to 254 parity symbols, not \(count)"
        case .dataTooLong(let length, let maximum):
            "\(length) bytes of data do not fit one codeword: at most \(maximum) with this many parity symbols; split the data"
        case .invalidCodewordLength(let length, let minimum, let maximum):
            "a codeword of \(length) bytes: it must hold its parity and be \(minimum) to \(maximum) bytes long"
        case .parityBufferLength(let length, let expected):
            "the parity buffer has \(length) bytes; it must have exactly \(expected), one per parity symbol"
        case .erasureOutOfRange(let position, let codewordLength):
            "erasure position \(position) is outside the codeword's \(codewordLength) bytes (0 to \(codewordLength - 1))"
        case .repeatedErasure(let position):
            "erasure position \(position) is named more than once; name each erased byte once"
        case .tooManyErasures(let count, let maximum):
            "\(count) erasures, but \(maximum) parity symbols can repair at most \(maximum)"
        case .tooManyErrors:
            "the codeword is damaged beyond what its parity can repair (2 × errors + erasures exceeds the parity symbols); it was left unchanged"
        case .invalidBlockLength(let length, let expected):
            "a block of \(length) bytes; the interleaved layout needs \(expected)"
        }
    }
}
