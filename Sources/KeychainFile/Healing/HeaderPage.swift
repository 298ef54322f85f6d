/// One 4 KiB page holding a copy of the version 2 header with its own Reed–Solomon parity
/// (Docs/FormatVersion2.md §1): the header, zeros to 3,568 bytes, 512 bytes of RS(255, 223) parity over
/// those 3,568 bytes interleaved 16 deep, and 16 zero bytes. Any 16 damaged bytes of each of the 16 codewords
/// — 256 scattered bytes, or a burst of 256 — are repaired; a lost sector takes the page, and the other copy
/// serves.
///
/// Parity only proposes: a header whose checksum (which covers every byte of it, MAC included) verifies as read
/// is used as read; a repaired copy counts only if its checksum then verifies (and, once the master key is known,
/// its MAC).
///
/// ```swift
/// let page = HeaderPage.encode(headerBytes)          // 4,096 bytes
/// let copy = HeaderPage.decode(page)                 // .intact(headerBytes)
/// ```
enum HeaderPage {
    static let length = HealingLayout.headerPageLength
    static let blockLength = 16 * 223
    static let parity: InterleavedParity = {
        // 32 symbols, depth 16, 3,568 bytes: within the code's limits by construction.
        guard let parity = try? InterleavedParity(paritySymbols: 32, depth: 16, blockLength: blockLength) else {
            preconditionFailure("HeaderPage: the parity layout does not fit the code")
        }
        return parity
    }()

    /// What reading one page found.
    enum Copy: Equatable, Sendable {
        /// The header verified as read, and so did the page's pad and parity.
        case intact([UInt8])
        /// The header verified after `repairedBytes` bytes of the page (header, pad or parity) were repaired,
        /// or verified as read while the rest of the page did not: either way a writer rewrites the page.
        case repaired([UInt8], repairedBytes: Int)
        /// No header verified, as read or repaired.
        case unusable(reason: String)

        /// The header's bytes, if the copy is usable.
        var header: [UInt8]? {
            switch self {
            case .intact(let bytes), .repaired(let bytes, _): return bytes
            case .unusable: return nil
            }
        }
    }

    /// The page for a header's bytes (at most 3,568).
    static func encode(_ header: [UInt8]) -> [UInt8] {
        precondition(header.count <= blockLength, "HeaderPage: a header longer than a page's data")
        var block = header
        block.append(contentsOf: repeatElement(0, count: blockLength - header.count))
        // The block has exactly blockLength bytes, so parity(of:) cannot throw.
        let paritySymbols = (try? parity.parity(of: block)) ?? []
        return block + paritySymbols + [UInt8](repeating: 0, count: length - blockLength - parity.parityLength)
    }

    /// Reads a page: the header as read whenever its structure and checksum verify — parity only proposes, so it
    /// is used only when the header as read fails — reported `.intact` when the pad and parity agree with it and
    /// `.repaired` when they do not (a writer rewrites the page); else the header the parity's proposal yields,
    /// if its checksum verifies, even when some codeword was beyond repair (its damage may lie in pad or parity;
    /// the checksum, then the MAC, decide).
    ///
    /// - Parameters:
    ///   - page: the page's bytes (fewer than 4,096 when the file is short: the rest count as zeros).
    ///   - fileOffset: where the page stands, for messages.
    static func decode(_ page: [UInt8], fileOffset: Int = 0) -> Copy {
        var page = page
        if page.count < length { page.append(contentsOf: repeatElement(0, count: length - page.count)) }
        let asRead = header(in: page, fileOffset: fileOffset)
        var block = Array(page[0..<blockLength])
        var paritySymbols = Array(page[blockLength..<(blockLength + parity.parityLength)])
        let tailIsZero = page[(blockLength + parity.parityLength)...].allSatisfy { $0 == 0 }
        guard let outcome = try? parity.repair(block: &block, parity: &paritySymbols) else {
            // Not reached: the block and parity have the sizes the parity layout was made for.
            if case .success(let bytes) = asRead { return .repaired(bytes, repairedBytes: 1) }
            return .unusable(reason: "the page's parity could not be applied")
        }
        let disagreeing = outcome.blockOffsets.count + outcome.parityOffsets.count + (tailIsZero ? 0 : 1)
        switch asRead {
        case .success(let bytes):
            if disagreeing == 0, outcome.unrepairedCodewords.isEmpty { return .intact(bytes) }
            return .repaired(bytes, repairedBytes: max(1, disagreeing))
        case .failure(let error):
            if case .success(let bytes) = header(in: block, fileOffset: fileOffset) {
                return .repaired(bytes, repairedBytes: max(1, disagreeing))
            }
            return .unusable(reason: "\(error); \(outcome.unrepairedCodewords.count) of 16 codewords beyond repair")
        }
    }

    /// The header at the start of `bytes`, if its structure and checksum verify (the pad after it is the
    /// parity's to check).
    private static func header(in bytes: [UInt8], fileOffset: Int) -> Result<[UInt8], KeychainError> {
        guard let declared = FileHeaderV2.declaredLength(bytes) else {
            return .failure(.corrupted(offset: fileOffset, reason: "no version 2 header (magic, version, flags or length)"))
        }
        let candidate = Array(bytes[0..<declared])
        do {
            _ = try FileHeaderV2.parse(candidate, fileOffset: fileOffset)
        } catch {
            return .failure(error)
        }
        return .success(candidate)
    }
}
