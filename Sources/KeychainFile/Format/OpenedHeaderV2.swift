@_spi(KeychainFileInternals) import KeychainCrypto

/// A version 2 header opened with a credential: the copy chosen, the master key, the epoch's keys and C0, the
/// chosen copy's slot that opened, and what each header page needed (Docs/FormatVersion2.md §4).
///
/// A copy counts once its checksum verifies (after repair from its own parity if need be). Every copy's slots
/// are tried with the credential — a slot that is damaged, or a copy whose MAC fails, does not stop the other
/// copy — and every copy's MAC is checked under each master key a slot gave. Of the copies that verify, the one
/// with the highest epoch is used, and page A's when both have the same (every header change is a rewrite
/// into a new epoch, so two different copies of one epoch are a writer's bug or tampering, never damage). The
/// header, key and slot index returned all come from that one copy; a page that holds anything else is
/// reported, for a writer to rewrite.
///
/// ```swift
/// let opened = try OpenedHeaderV2(pageA: a, pageB: b, credential: .password("…"))
/// opened.header.rewriteEnd; opened.pages     // [.intact(…), .repaired(…, repairedBytes: 3)]
/// ```
struct OpenedHeaderV2: Sendable {
    let header: FileHeaderV2
    /// The chosen copy's bytes.
    let headerBytes: [UInt8]
    let masterKey: SymmetricKey
    let keys: EpochKeys
    /// C0, the chain value before the epoch's first record.
    let initialChain: [UInt8]
    /// The position, in `header`, of the slot that opened.
    let slotIndex: Int
    /// What reading pages A and B found; a writer rewrites every page that is not `.intact`. A page that holds
    /// a header other than the chosen one — one that does not verify, or one that does but lost by the rule —
    /// is `.unusable`, whatever its parity said.
    let pages: [HeaderPage.Copy]
    /// Whether the other page holds a different header that verifies too (its page is `.unusable`, saying so).
    let copiesDisagree: Bool

    /// Where the two pages stand.
    static let pageOffsets = [0, HealingLayout.headerBOffset]

    /// - Throws: `.corrupted` when neither page holds a header whose checksum verifies (naming both reasons),
    ///   when a committed slot's commitment matches but its wrap fails and no copy verifies, when the MAC fails
    ///   on every copy (or a copy that verifies has rewrite end 0 and a rewrite head other than C0), or when the
    ///   chosen copy has no slot for `credential` although the other copy's opened;
    ///   `.wrongCredentials` when no slot of either copy opens with `credential`; `.limitReached` when no slot
    ///   opens and `budget` refused to derive one (its memory above the cap, or the work of both copies
    ///   together above one header's).
    init(
        pageA: [UInt8], pageB: [UInt8], credential: Credential,
        budget: KeyDerivationBudget = KeyDerivationBudget(memoryLimitKiB: KeyDerivationBudget.standardMemoryLimitKiB)
    ) throws(KeychainError) {
        let pages = [HeaderPage.decode(pageA, fileOffset: Self.pageOffsets[0]), HeaderPage.decode(pageB, fileOffset: Self.pageOffsets[1])]
        var candidates: [Candidate] = []
        for (index, page) in pages.enumerated() {
            guard let bytes = page.header, !candidates.contains(where: { $0.bytes == bytes }),
                  let header = try? FileHeaderV2.parse(bytes, fileOffset: Self.pageOffsets[index])
            else { continue }
            candidates.append(Candidate(bytes: bytes, header: header, page: index))
        }
        guard !candidates.isEmpty else {
            let reasons = pages.enumerated().compactMap { index, page -> String? in
                if case .unusable(let reason) = page { return "page \(Self.name(index)): \(reason)" }
                return nil
            }
            throw .corrupted(offset: 0, reason: "neither copy of the header can be read or repaired (\(reasons.joined(separator: "; ")))")
        }
        // Each copy's slots with the credential, the copy the rule prefers first, so that the budget, spent once
        // across both copies, always covers it; a slot the other copy holds byte for byte is not derived again.
        var budget = budget
        var firstFailure: KeychainError? = nil
        var tried: [(fileID: [UInt8], slot: HeaderKeySlot, key: SymmetricKey?)] = []
        var openings = [(key: SymmetricKey, slot: Int)?](repeating: nil, count: candidates.count)
        let preferred = candidates.indices.sorted { candidates[$0].header.epoch > candidates[$1].header.epoch || (candidates[$0].header.epoch == candidates[$1].header.epoch && $0 < $1) }
        for candidateIndex in preferred {
            let candidate = candidates[candidateIndex]
            for (index, slot) in candidate.header.slots.enumerated() {
                let key: SymmetricKey?
                if let earlier = tried.first(where: { $0.fileID == candidate.header.fileID && $0.slot == slot }) {
                    key = earlier.key
                } else {
                    let offset = Self.pageOffsets[candidate.page] + candidate.header.slotOffset(index)
                    do {
                        try budget.charge(slot, for: credential, slotOffset: offset)
                        key = try slot.open(with: credential, fileID: candidate.header.fileID, slotOffset: offset)
                    } catch {
                        firstFailure = firstFailure ?? error
                        key = nil
                    }
                    tried.append((candidate.header.fileID, slot, key))
                }
                if let key {
                    openings[candidateIndex] = (key, index)
                    break
                }
            }
        }
        // Each copy's MAC under every master key a slot gave (its own slot's first).
        var verified: [(candidate: Int, key: SymmetricKey, keys: EpochKeys)] = []
        for (index, candidate) in candidates.enumerated() {
            var masterKeys = openings.compactMap { $0?.key }
            if let own = openings[index]?.key { masterKeys.insert(own, at: 0) }
            var found: (key: SymmetricKey, keys: EpochKeys)? = nil
            for key in masterKeys {
                let keys = try candidate.header.epochKeys(masterKey: key)
                if FileHeaderV2.verifyMAC(candidate.bytes, headerKey: keys.header) {
                    found = (key, keys)
                    break
                }
            }
            if let found, candidate.header.rewriteEnd == 0,
               candidate.header.rewriteHeadChain != candidate.header.initialChainValue(headerKey: found.keys.header) {
                // Verified, but not as a writer writes it: a rewrite that wrote no records leaves head (0, C0).
                firstFailure = firstFailure ?? .corrupted(
                    offset: Self.pageOffsets[candidate.page] + 88,
                    reason: "page \(Self.name(candidate.page))'s header has rewrite end 0 but a rewrite head chain value other than C0")
            } else if let found {
                verified.append((index, found.key, found.keys))
            } else if !masterKeys.isEmpty {
                firstFailure = firstFailure ?? .corrupted(
                    offset: Self.pageOffsets[candidate.page] + candidate.bytes.count - FileHeaderV2.trailerLength,
                    reason: "page \(Self.name(candidate.page))'s header MAC does not verify under the key its slots opened: the header was altered")
            }
        }
        // The rule: the highest epoch, then page A (candidates are in page order).
        guard let chosen = verified.max(by: { candidates[$0.candidate].header.epoch < candidates[$1.candidate].header.epoch || (candidates[$0.candidate].header.epoch == candidates[$1.candidate].header.epoch && $0.candidate > $1.candidate) }) else {
            throw firstFailure ?? .wrongCredentials
        }
        let copy = candidates[chosen.candidate]
        guard let opening = openings[chosen.candidate], opening.key == chosen.key else {
            throw .corrupted(
                offset: Self.pageOffsets[copy.page] + FileHeaderV2.fixedLength,
                reason: "page \(Self.name(copy.page))'s header (epoch \(copy.header.epoch)), which verifies and is used by the rule (highest epoch, then page A), has no key slot that opens with this credential, but the other page's has: the two copies disagree")
        }
        header = copy.header
        headerBytes = copy.bytes
        masterKey = chosen.key
        keys = chosen.keys
        initialChain = copy.header.initialChainValue(headerKey: chosen.keys.header)
        slotIndex = opening.slot
        copiesDisagree = verified.count > 1
        self.pages = pages.enumerated().map { index, page in
            guard let bytes = page.header, bytes != copy.bytes else { return page }
            let other = candidates.firstIndex { $0.bytes == bytes }
            if let other, verified.contains(where: { $0.candidate == other }) {
                return .unusable(reason: "page \(Self.name(index)) holds another header that also verifies (epoch \(candidates[other].header.epoch)); page \(Self.name(copy.page))'s (epoch \(copy.header.epoch)) is used by the rule: the highest epoch, then page A")
            }
            return .unusable(reason: "page \(Self.name(index)) holds another header than page \(Self.name(copy.page))'s, and it does not verify under the key the credential opened")
        }
    }

    private struct Candidate {
        let bytes: [UInt8]
        let header: FileHeaderV2
        let page: Int
    }

    private static func name(_ page: Int) -> String { page == 0 ? "A" : "B" }
}
