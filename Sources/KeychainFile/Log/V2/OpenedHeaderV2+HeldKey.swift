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
        for (index, page) in pages.enumerated() {
            guard let bytes = page.header, let header = try? FileHeaderV2.parse(bytes, fileOffset: Self.pageOffsets[index]) else { continue }
            let keys = try header.epochKeys(masterKey: masterKey)
            guard FileHeaderV2.verifyMAC(bytes, headerKey: keys.header) else { continue }
            self.header = header
            headerBytes = bytes
            self.masterKey = masterKey
            self.keys = keys
            initialChain = header.initialChainValue(headerKey: keys.header)
            slotIndex = -1
            self.pages = pages.map { other in
                guard let otherBytes = other.header, otherBytes != bytes else { return other }
                return .unusable(reason: "the page holds another header than the copy that verified")
            }
            return
        }
        throw .wrongCredentials
    }
}

extension HeaderPage.Copy {
    /// Whether the page holds its header as written, with its pad and parity.
    var isIntact: Bool {
        if case .intact = self { return true }
        return false
    }
}
