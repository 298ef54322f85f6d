@_spi(KeychainFileInternals) import KeychainCrypto

extension OpenedHeaderV2 {
    /// Opens a header with a master key this process already holds (catching up with a file another process
    /// rewrote without changing the key): the first copy whose MAC verifies under the epoch keys it derives.
    /// No slot is opened, so no KDF runs.
    ///
    /// - Throws: `.corrupted` if no copy reads; `.wrongCredentials` if no copy verifies under `masterKey` (it was
    ///   rotated: the caller opens the header with its credential).
    init(pageA: [UInt8], pageB: [UInt8], masterKey: SymmetricKey) throws(KeychainError) {
        let pages = [HeaderPage.decode(pageA, fileOffset: Self.pageOffsets[0]), HeaderPage.decode(pageB, fileOffset: Self.pageOffsets[1])]
        var verified: [(bytes: [UInt8], header: FileHeaderV2, keys: EpochKeys)] = []
        for (index, page) in pages.enumerated() {
            guard let bytes = page.header, let header = try? FileHeaderV2.parse(bytes, fileOffset: Self.pageOffsets[index]) else { continue }
            let keys = try header.epochKeys(masterKey: masterKey)
            if FileHeaderV2.verifyMAC(bytes, headerKey: keys.header) { verified.append((bytes, header, keys)) }
        }
        // As a credential's open chooses (Docs/FormatVersion2.md §4): the highest epoch, then page A.
        guard let chosen = verified.enumerated().max(by: { ($0.element.header.epoch, -$0.offset) < ($1.element.header.epoch, -$1.offset) })?.element
        else { throw .wrongCredentials }
        header = chosen.header
        headerBytes = chosen.bytes
        self.masterKey = masterKey
        keys = chosen.keys
        initialChain = chosen.header.initialChainValue(headerKey: chosen.keys.header)
        slotIndex = -1
        copiesDisagree = verified.count == 2 && verified[0].bytes != verified[1].bytes
        self.pages = pages.map { other in
            guard let otherBytes = other.header, otherBytes != chosen.bytes else { return other }
            return .unusable(reason: "the page holds another header than the copy that verified")
        }
    }
}

extension HeaderPage.Copy {
    /// Whether the page holds its header as written, with its pad and parity.
    var isIntact: Bool {
        if case .intact = self { return true }
        return false
    }
}
