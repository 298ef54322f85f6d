@_spi(KeychainFileInternals) import KeychainCrypto

/// A version 2 header opened with a credential: the copy that verified, the master key, the epoch's keys and
/// C0, and what each header page needed (Docs/FormatVersion2.md §4).
///
/// A reader takes the first copy (page A, then B) whose checksum verifies, after repair from its own parity if
/// need be; opens its slots with the credential; and checks the copy's MAC with the key found. A copy whose
/// slot is damaged or whose MAC fails does not stop the other copy (when it differs) from being tried in turn;
/// the header, key and slot index returned all come from the one copy that verified.
///
/// ```swift
/// let opened = try OpenedHeaderV2(pageA: a, pageB: b, credential: .password("…"))
/// opened.header.rewriteEnd; opened.pages     // [.intact(…), .repaired(…, repairedBytes: 3)]
/// ```
struct OpenedHeaderV2: Sendable {
    let header: FileHeaderV2
    /// The verified copy's bytes.
    let headerBytes: [UInt8]
    let masterKey: SymmetricKey
    let keys: EpochKeys
    /// C0, the chain value before the epoch's first record.
    let initialChain: [UInt8]
    /// The position of the slot that opened.
    let slotIndex: Int
    /// What reading pages A and B found; a writer rewrites every page that is not `.intact`.
    let pages: [HeaderPage.Copy]

    /// Where the two pages stand.
    static let pageOffsets = [0, HealingLayout.headerBOffset]

    /// - Throws: `.corrupted` when neither page holds a header that verifies (naming both reasons), when a
    ///   committed slot's commitment matches but its wrap fails, or when the MAC fails on every copy;
    ///   `.wrongCredentials` when no slot opens with `credential`.
    init(pageA: [UInt8], pageB: [UInt8], credential: Credential) throws(KeychainError) {
        let pages = [HeaderPage.decode(pageA, fileOffset: Self.pageOffsets[0]), HeaderPage.decode(pageB, fileOffset: Self.pageOffsets[1])]
        var candidates: [(bytes: [UInt8], header: FileHeaderV2, page: Int)] = []
        for (index, page) in pages.enumerated() {
            guard let bytes = page.header, !candidates.contains(where: { $0.bytes == bytes }),
                  let header = try? FileHeaderV2.parse(bytes, fileOffset: Self.pageOffsets[index])
            else { continue }
            candidates.append((bytes, header, index))
        }
        guard !candidates.isEmpty else {
            let reasons = pages.enumerated().map { index, page in
                if case .unusable(let reason) = page { return "page \(index == 0 ? "A" : "B"): \(reason)" }
                return ""
            }
            throw .corrupted(offset: 0, reason: "neither copy of the header can be read or repaired (\(reasons.joined(separator: "; ")))")
        }
        // Each copy in turn: its slots, then its MAC under the key a slot gave. A copy whose slot is damaged
        // (commitment matched, wrap failed) or whose MAC fails does not stop the other copy from being tried.
        var firstFailure: KeychainError? = nil
        for candidate in candidates {
            var found: (key: SymmetricKey, slot: Int)? = nil
            for (index, slot) in candidate.header.slots.enumerated() {
                let offset = Self.pageOffsets[candidate.page] + candidate.header.slotOffset(index)
                do {
                    if let key = try slot.open(with: credential, fileID: candidate.header.fileID, slotOffset: offset) {
                        found = (key, index)
                        break
                    }
                } catch {
                    firstFailure = firstFailure ?? error
                }
            }
            guard let found else { continue }
            let keys = try candidate.header.epochKeys(masterKey: found.key)
            guard FileHeaderV2.verifyMAC(candidate.bytes, headerKey: keys.header) else {
                firstFailure = firstFailure ?? .corrupted(
                    offset: Self.pageOffsets[candidate.page] + candidate.bytes.count - 32,
                    reason: "the header's MAC does not verify under the key its slot opened: the header was altered")
                continue
            }
            header = candidate.header
            headerBytes = candidate.bytes
            masterKey = found.key
            self.keys = keys
            initialChain = candidate.header.initialChainValue(headerKey: keys.header)
            slotIndex = found.slot
            // A page that does not hold this very copy is for a writer to rewrite, whatever it held.
            self.pages = pages.enumerated().map { index, page in
                guard let bytes = page.header, bytes != candidate.bytes else { return page }
                return .unusable(reason: "page \(index == 0 ? "A" : "B") holds another header than the copy that verified")
            }
            return
        }
        throw firstFailure ?? .wrongCredentials
    }
}
