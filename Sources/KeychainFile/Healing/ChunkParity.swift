/// The parity of one chunk of a format version 2 log (Docs/FormatVersion2.md §2): 256 interleaved
/// RS(255, 223) codewords over 57,088 data bytes, kept up to date as bytes are appended.
///
/// Data byte `i·256 + j` of the chunk is symbol `i` of codeword `j` at a fixed place: a symbol not written
/// yet is a zero at its own position (the message is the chunk's bytes padded with zeros to 223 symbols), not
/// a shortened code whose positions shift as the chunk grows. The code is linear, so appending byte b at
/// symbol i adds b times the parity of the unit message at i, and the parity after any sequence of appends
/// equals the parity encoded from scratch. Parity symbol `p` of codeword `j` is byte `p·256 + j` of ``bytes``.
///
/// For example:
/// ```swift
/// var parity = ChunkParity()
/// parity.append(record, at: 0)                 // the chunk's first bytes
/// parity.append(next, at: record.count)        // and the next ones
/// // parity.bytes == ChunkParity(chunk: record + next).bytes
/// ```
struct ChunkParity: Sendable, Equatable {
    /// Codewords per chunk: the interleaving depth.
    static let depth = 256
    /// Data symbols per codeword.
    static let dataSymbols = 223
    /// Parity symbols per codeword.
    static let paritySymbols = 32
    /// Data bytes per chunk (57,088).
    static let dataLength = depth * dataSymbols
    /// Parity bytes per chunk (8,192).
    static let parityLength = depth * paritySymbols

    /// The parity, ``parityLength`` bytes.
    private(set) var bytes: [UInt8]

    /// The parity of an empty chunk (all zeros).
    init() {
        bytes = [UInt8](repeating: 0, count: Self.parityLength)
    }

    /// Parity read from a file, ``parityLength`` bytes: trusted for nothing but proposing repairs.
    ///
    /// - Precondition: `storedBytes.count == parityLength`.
    init(storedBytes: [UInt8]) {
        precondition(storedBytes.count == Self.parityLength, "chunk parity is \(Self.parityLength) bytes")
        bytes = storedBytes
    }

    /// The parity of `chunk`, encoded from scratch.
    ///
    /// - Precondition: `chunk.count ≤ dataLength`.
    init(chunk: [UInt8]) {
        precondition(chunk.count <= Self.dataLength, "a chunk holds at most \(Self.dataLength) bytes")
        bytes = [UInt8](repeating: 0, count: Self.parityLength)
        var message = [UInt8](repeating: 0, count: Self.dataSymbols)
        for codeword in 0..<Self.depth {
            for symbol in 0..<Self.dataSymbols {
                let offset = symbol * Self.depth + codeword
                message[symbol] = offset < chunk.count ? chunk[offset] : 0
            }
            let parity = Self.encode(message)
            for symbol in 0..<Self.paritySymbols { bytes[symbol * Self.depth + codeword] = parity[symbol] }
        }
    }

    /// Adds the contribution of `appended`, written at chunk offset `offset` where the chunk held zeros
    /// (bytes not written before).
    ///
    /// - Precondition: `offset + appended.count ≤ dataLength`.
    mutating func append(_ appended: some Collection<UInt8>, at offset: Int) {
        precondition(offset >= 0 && offset + appended.count <= Self.dataLength, "the bytes lie outside the chunk")
        if appended.count >= Self.encodingThreshold {
            // The code is linear: the parity of the appended bytes at their places, zeros elsewhere, is added to
            // the parity so far. Encoding every codeword costs about what 32 table steps cost for a thousand bytes.
            var placed = [UInt8](repeating: 0, count: offset)
            placed.append(contentsOf: appended)
            let added = ChunkParity(chunk: placed)
            for index in bytes.indices { bytes[index] ^= added.bytes[index] }
            return
        }
        let table = Self.unitParityLogarithms
        var position = offset
        for byte in appended {
            defer { position += 1 }
            guard byte != 0 else { continue }
            let symbol = position / Self.depth
            let codeword = position % Self.depth
            let logByte = Int(GaloisField256.logarithms[Int(byte)])
            let row = symbol * Self.paritySymbols
            for paritySymbol in 0..<Self.paritySymbols {
                let logUnit = table[row + paritySymbol]
                guard logUnit != Self.zeroLogarithm else { continue }
                bytes[paritySymbol * Self.depth + codeword] ^= GaloisField256.powers[logByte + Int(logUnit)]
            }
        }
    }

    /// Repairs `chunk` (its written bytes; the rest are zeros) and ``bytes`` in place, codeword by codeword.
    ///
    /// Parity proposes bytes; the caller accepts them only if what they belong to then verifies by its tags.
    ///
    /// - Parameters:
    ///   - chunk: The chunk's bytes as read.
    ///   - erasedData: Chunk offsets known to be lost (unreadable sectors, zero-filled): erasures, which cost a
    ///     codeword one parity symbol each instead of two, so up to 32 per codeword are repaired.
    ///   - erasedParity: Offsets into ``bytes`` known to be lost.
    ///   - margin: Parity symbols a codeword's repair must leave unused: its erasures plus twice its errors may
    ///     reach `paritySymbols − margin` only. With erasures that are guesses rather than known losses, a
    ///     repair that uses every parity symbol proves nothing — almost any bytes decode — so the caller keeps
    ///     a few for checking.
    /// - Returns: The chunk offsets changed, ascending, and the codewords that could not be repaired (too many
    ///   damaged symbols): those are left as they were.
    /// - Precondition: `chunk.count ≤ dataLength`.
    mutating func repair(
        chunk: inout [UInt8], erasedData: Set<Int> = [], erasedParity: Set<Int> = [], margin: Int = 0
    ) -> (changedOffsets: [Int], unrepairedCodewords: [Int]) {
        precondition(chunk.count <= Self.dataLength, "a chunk holds at most \(Self.dataLength) bytes")
        let code = Self.code
        var changed: [Int] = []
        var unrepaired: [Int] = []
        var codewordBytes = [UInt8](repeating: 0, count: Self.dataSymbols + Self.paritySymbols)
        for codeword in 0..<Self.depth {
            for symbol in 0..<Self.dataSymbols {
                let offset = symbol * Self.depth + codeword
                codewordBytes[symbol] = offset < chunk.count ? chunk[offset] : 0
            }
            for symbol in 0..<Self.paritySymbols {
                codewordBytes[Self.dataSymbols + symbol] = bytes[symbol * Self.depth + codeword]
            }
            var erasures: [Int] = []
            if !erasedData.isEmpty || !erasedParity.isEmpty {
                for symbol in 0..<Self.dataSymbols where erasedData.contains(symbol * Self.depth + codeword) {
                    erasures.append(symbol)
                }
                for symbol in 0..<Self.paritySymbols where erasedParity.contains(symbol * Self.depth + codeword) {
                    erasures.append(Self.dataSymbols + symbol)
                }
            }
            do throws(ReedSolomonError) {
                let positions = try code.correct(codeword: &codewordBytes, erasures: erasures)
                // A nonzero symbol past the written end means the decoder found another codeword than the
                // chunk's: nothing is taken from this one.
                let outside = positions.contains { $0 < Self.dataSymbols && $0 * Self.depth + codeword >= chunk.count && codewordBytes[$0] != 0 }
                let errors = margin == 0 ? 0 : positions.filter { !erasures.contains($0) }.count
                if outside || erasures.count + 2 * errors > Self.paritySymbols - margin {
                    unrepaired.append(codeword)
                    continue
                }
                for position in positions {
                    if position < Self.dataSymbols {
                        let offset = position * Self.depth + codeword
                        guard offset < chunk.count else { continue }
                        chunk[offset] = codewordBytes[position]
                        changed.append(offset)
                    } else {
                        bytes[(position - Self.dataSymbols) * Self.depth + codeword] = codewordBytes[position]
                    }
                }
            } catch {
                unrepaired.append(codeword)
            }
        }
        return (changed.sorted(), unrepaired)
    }

    // MARK: Tables

    /// The code every codeword uses.
    private static let code: ReedSolomonCode = {
        do { return try ReedSolomonCode(paritySymbols: paritySymbols) } catch { preconditionFailure("RS(255, 223) is supported: \(error)") }
    }()

    /// The parity of one 223-symbol message.
    private static func encode(_ message: [UInt8]) -> [UInt8] {
        do { return try code.parity(of: message) } catch { preconditionFailure("a 223-symbol message fits RS(255, 223): \(error)") }
    }

    /// Appends of at least this many bytes are encoded codeword by codeword rather than byte by byte.
    static let encodingThreshold = 1_024

    /// Marks a zero coefficient in ``unitParityLogarithms`` (zero has no logarithm).
    private static let zeroLogarithm: UInt8 = 255

    /// For each symbol position i, the logarithms of the parity of the message with 1 at i and zeros elsewhere
    /// (``zeroLogarithm`` for a zero coefficient): 223 × 32 entries.
    private static let unitParityLogarithms: [UInt8] = {
        var table = [UInt8](repeating: 0, count: dataSymbols * paritySymbols)
        var unit = [UInt8](repeating: 0, count: dataSymbols)
        for symbol in 0..<dataSymbols {
            unit[symbol] = 1
            let parity = encode(unit)
            unit[symbol] = 0
            for paritySymbol in 0..<paritySymbols {
                let value = parity[paritySymbol]
                table[symbol * paritySymbols + paritySymbol] = value == 0 ? zeroLogarithm : GaloisField256.logarithms[Int(value)]
            }
        }
        return table
    }()
}
