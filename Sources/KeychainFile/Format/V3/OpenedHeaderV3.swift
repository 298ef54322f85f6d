@_spi(KeychainFileInternals) import KeychainCrypto

/// A version 3 header opened with a credential (Docs/FormatVersion3.md §2.9): the copy chosen, the slot that
/// opened and its keys, the epoch's log keys and C0, the key table when the credential is full, and what each run
/// of header pages needed.
///
/// Run A's first page gives the page count, and so where run B stands; when it cannot, run B is looked for at each
/// of the sixteen places a run of 1 … 16 pages puts it (its own first page must declare that count). Then as
/// version 2 (SPEC §20.3): every usable copy's slots are tried with the credential (run A's first), each copy's MAC
/// is checked under every log key a slot gave, and of the copies that verify the one with the highest epoch is
/// used, run A's when both have the same. Unlike version 2, two runs of different file ids, or a run of a later
/// epoch than the chosen one that passed its checksum but did not verify, are `corrupted`: never an older copy
/// opened in place of a newer one. A slot that opens but whose keys do not verify the header — its newest grants dropped, or the
/// header altered — is `corrupted`, never `wrongCredentials`.
///
/// ```swift
/// let opened = try OpenedHeaderV3(read: { offset, count in Array(file[offset..<min(file.count, offset + count)]) },
///                                 credential: .password("…"))
/// opened.groups.map(\.name)        // [""] for a new keychain: the default group
/// ```
struct OpenedHeaderV3: Sendable {
    /// Where a run stands and what reading it found.
    struct Run: Sendable, Equatable {
        let offset: Int
        let pageCount: Int
        let copy: HeaderPage.Copy
    }

    let header: FileHeaderV3
    /// The chosen copy's bytes.
    let headerBytes: [UInt8]
    /// How many pages each run has: with it, where the commit slots, run B and the log stand (``HeaderRunV3``).
    let pageCount: Int
    /// The position, in `header`, of the slot that opened, and what opening it gave.
    let slotIndex: Int
    let slot: OpenedSlotV3
    let logKeys: LogKeysV3
    /// C0, the chain value before the epoch's first record.
    let initialChain: [UInt8]
    /// The key table, for a full credential; `nil` for a scoped one, which cannot open it.
    let keyTable: KeyTableV3?
    /// Runs A and B as the chosen header's page count places them; a run that holds anything else than the chosen
    /// header is `.unusable`, saying why, for a writer to rewrite.
    let runs: [Run]
    /// Whether the other run holds a different header that verifies too.
    let copiesDisagree: Bool

    /// The groups the credential reaches: every group of the key table for a full credential, its scope's for a
    /// scoped one.
    var groups: [KeySetV3.Group] { keyTable?.groups ?? slot.keys.groups }

    /// - Parameters:
    ///   - read: reads `count` bytes at a file offset, fewer at the end of the file.
    ///   - credential: the password or raw key to open with.
    ///   - budget: what the key derivations of this open may cost, across both copies.
    /// - Throws: `.corrupted` when neither run holds a header whose checksum verifies, when a slot's commitment
    ///   matches but the slot does not open, when its keys do not verify the header's MAC, when the key table does
    ///   not open under a full slot's root, or when the chosen copy has no slot for `credential` although the other
    ///   copy's opened; `.wrongCredentials` when no slot of either copy is the credential's; `.limitReached` when no
    ///   slot opens and `budget` refused one; whatever `read` throws.
    init(
        read: (_ offset: Int, _ count: Int) throws(KeychainError) -> [UInt8], credential: Credential,
        budget: KeyDerivationBudget = KeyDerivationBudget(memoryLimitKiB: KeyDerivationBudget.standardMemoryLimitKiB)
    ) throws(KeychainError) {
        let (located, candidates) = try Self.candidates(read: read)
        // Each copy's slots with the credential, run A's first — a fixed order, so that a copy's unauthenticated
        // epoch cannot steer the budget, spent once across both copies, away from the other copy; a slot the other
        // copy holds byte for byte is not derived again.
        var budget = budget
        var firstFailure: KeychainError? = nil
        var tried: [(fileID: [UInt8], slot: KeySlotV3, opened: OpenedSlotV3?)] = []
        var openings = [(opened: OpenedSlotV3, slot: Int)?](repeating: nil, count: candidates.count)
        for candidateIndex in candidates.indices {
            let candidate = candidates[candidateIndex]
            for (index, slot) in candidate.header.slots.enumerated() {
                let opened: OpenedSlotV3?
                if let earlier = tried.first(where: { $0.fileID == candidate.header.fileID && $0.slot == slot }) {
                    opened = earlier.opened
                } else {
                    let offset = candidate.run.offset + candidate.header.slotOffset(index)
                    do {
                        try budget.charge(slot, for: credential, slotOffset: offset)
                        opened = try slot.open(with: credential, fileID: candidate.header.fileID, slotOffset: offset)
                    } catch {
                        firstFailure = firstFailure ?? error
                        opened = nil
                    }
                    tried.append((candidate.header.fileID, slot, opened))
                }
                if let opened {
                    openings[candidateIndex] = (opened, index)
                    break
                }
            }
        }
        // Each copy's MAC under every log key a slot gave (its own slot's first).
        var verified: [(candidate: Int, logKey: SymmetricKey, keys: LogKeysV3)] = []
        for (index, candidate) in candidates.enumerated() {
            var logKeys = openings.compactMap { $0?.opened.keys.logKey }
            if let own = openings[index]?.opened.keys.logKey { logKeys.insert(own, at: 0) }
            var found: (logKey: SymmetricKey, keys: LogKeysV3)? = nil
            for logKey in logKeys {
                let keys = try candidate.header.logKeys(logKey: logKey)
                if FileHeaderV3.verifyMAC(candidate.bytes, headerKey: keys.header) {
                    found = (logKey, keys)
                    break
                }
            }
            if let found, candidate.header.rewriteEnd == 0,
               candidate.header.rewriteHeadChain != candidate.header.initialChainValue(headerKey: found.keys.header) {
                firstFailure = firstFailure ?? .corrupted(
                    offset: candidate.run.offset + 88,
                    reason: "run \(Self.name(candidate.run.name))'s header has rewrite end 0 but a rewrite head chain value other than C0")
            } else if let found {
                verified.append((index, found.logKey, found.keys))
            } else if !logKeys.isEmpty {
                firstFailure = firstFailure ?? .corrupted(
                    offset: candidate.run.offset + candidate.bytes.count - FileHeaderV3.trailerLength,
                    reason: "run \(Self.name(candidate.run.name))'s header MAC does not verify under the log key its slot gave: the header was altered, or the slot's newest grants were taken out")
            }
        }
        guard let chosen = verified.max(by: { Self.precedes(candidates[$1.candidate], candidates[$0.candidate]) }) else {
            throw firstFailure ?? .wrongCredentials
        }
        let copy = candidates[chosen.candidate]
        // A copy of a later epoch whose checksum holds but that does not verify was altered (damage does not leave
        // a checksum intact) or no longer has this credential: opening the older copy would roll the keychain back.
        if let later = candidates.first(where: { $0.header.epoch > copy.header.epoch }) {
            throw .corrupted(
                offset: later.run.offset,
                reason: "run \(Self.name(later.run.name)) holds a header of a later epoch (\(later.header.epoch)) than the one this credential verifies (\(copy.header.epoch)): it was altered, or this credential was removed from it; the older copy is not opened in its place")
        }
        guard let opening = openings[chosen.candidate], opening.opened.keys.logKey == chosen.logKey else {
            throw .corrupted(
                offset: copy.run.offset + FileHeaderV3.fixedLength,
                reason: "run \(Self.name(copy.run.name))'s header (epoch \(copy.header.epoch)), which verifies and is used by the rule (highest epoch, then run A), has no key slot that opens with this credential, but the other run's has: the two copies disagree")
        }
        if let root = opening.opened.keys.root {
            do throws(SlotProblemV3) {
                keyTable = try KeyTableV3.open(copy.header.sealedKeyTable, root: root, fileID: copy.header.fileID)
            } catch {
                throw .corrupted(offset: copy.run.offset + FileHeaderV3.fixedLength, reason: "run \(Self.name(copy.run.name))'s key table: \(error.reason)")
            }
        } else {
            keyTable = nil
        }
        header = copy.header
        headerBytes = copy.bytes
        pageCount = copy.run.pageCount
        slotIndex = opening.slot
        slot = opening.opened
        logKeys = chosen.keys
        initialChain = copy.header.initialChainValue(headerKey: chosen.keys.header)
        copiesDisagree = verified.count > 1
        runs = try Self.runs(chosen: copy, located: located, verified: verified.map { candidates[$0.candidate] }, read: read)
    }

    /// The runs as located, and the different headers among them that parse: one file's, or `corrupted`.
    static func candidates(read: (Int, Int) throws(KeychainError) -> [UInt8]) throws(KeychainError) -> (located: [Located], candidates: [Candidate]) {
        let located = try locate(read: read)
        var candidates: [Candidate] = []
        var unusable: [String] = []
        for run in located {
            guard let bytes = run.copy.header else {
                if case .unusable(let reason) = run.copy { unusable.append("run \(name(run.name)) at byte \(run.offset): \(reason)") }
                continue
            }
            guard !candidates.contains(where: { $0.bytes == bytes }),
                  let header = try? FileHeaderV3.parse(bytes, fileOffset: run.offset) else { continue }
            candidates.append(Candidate(bytes: bytes, header: header, run: run))
        }
        guard !candidates.isEmpty else {
            throw .corrupted(offset: 0, reason: "neither copy of the header can be read or repaired (\(unusable.isEmpty ? "no version 3 header page found" : unusable.joined(separator: "; ")))")
        }
        // Both runs are of one file: a run of another keychain put beside this one is not a copy of it.
        guard Set(candidates.map(\.header.fileID)).count == 1 else {
            throw .corrupted(offset: 0, reason: "the two runs hold headers of different keychains (file ids \(candidates.map { HexText.lowercase($0.header.fileID) }.joined(separator: " and ")))")
        }
        return (located, candidates)
    }

    /// The header as this open verified it, for a log that keeps it: what a later catch-up can open again with the
    /// keys it holds (``VerifiedHeaderV3/init(read:logKey:root:)``) instead of deriving the credential's key.
    var verified: VerifiedHeaderV3 {
        VerifiedHeaderV3(
            header: header, headerBytes: headerBytes, pageCount: pageCount, logKey: slot.keys.logKey, logKeys: logKeys,
            initialChain: initialChain, root: slot.keys.root, keyTable: keyTable, scope: keyTable == nil ? slot.keys.groups : nil, runs: runs)
    }

    struct Candidate {
        let bytes: [UInt8]
        let header: FileHeaderV3
        let run: Located
    }

    struct Located {
        /// 0 for run A, 1 for run B.
        let name: Int
        let offset: Int
        let pageCount: Int
        let copy: HeaderPage.Copy
    }

    /// The rule's order: the higher epoch first, then run A.
    static func precedes(_ a: Candidate, _ b: Candidate) -> Bool {
        a.header.epoch > b.header.epoch || (a.header.epoch == b.header.epoch && a.run.name < b.run.name)
    }

    /// Run A at each count its first page declares (as read, and as repaired); run B where each of those counts
    /// puts it, and, when none of those holds a usable copy, at every other place a count of 1 … 16 puts it whose
    /// first page declares that count.
    private static func locate(read: (Int, Int) throws(KeychainError) -> [UInt8]) throws(KeychainError) -> [Located] {
        var located: [Located] = []
        let countsA = HeaderRunV3.declaredPageCounts(firstPage: try read(0, HeaderPage.length))
        for count in countsA {
            located.append(Located(name: 0, offset: 0, pageCount: count, copy: HeaderRunV3.decode(try read(0, count * HeaderPage.length), pageCount: count)))
        }
        var foundB = false
        for count in countsA {
            let offset = HeaderRunV3.runBOffset(pageCount: count)
            let copy = HeaderRunV3.decode(try read(offset, count * HeaderPage.length), pageCount: count, fileOffset: offset)
            located.append(Located(name: 1, offset: offset, pageCount: count, copy: copy))
            foundB = foundB || copy.header != nil
        }
        if foundB { return located }
        for count in 1...HeaderRunV3.maximumPages where !countsA.contains(count) {
            let offset = HeaderRunV3.runBOffset(pageCount: count)
            guard HeaderRunV3.declaredPageCounts(firstPage: try read(offset, HeaderPage.length)).contains(count) else { continue }
            let copy = HeaderRunV3.decode(try read(offset, count * HeaderPage.length), pageCount: count, fileOffset: offset)
            if copy.header != nil { located.append(Located(name: 1, offset: offset, pageCount: count, copy: copy)) }
        }
        return located
    }

    /// Runs A and B where the chosen header's page count puts them, each as read there, `.unusable` when it holds
    /// anything but the chosen header.
    static func runs(
        chosen: Candidate, located: [Located], verified: [Candidate], read: (Int, Int) throws(KeychainError) -> [UInt8]
    ) throws(KeychainError) -> [Run] {
        var runs: [Run] = []
        for name in 0...1 {
            let offset = name == 0 ? 0 : HeaderRunV3.runBOffset(pageCount: chosen.run.pageCount)
            let copy: HeaderPage.Copy
            if let found = located.first(where: { $0.name == name && $0.offset == offset && $0.pageCount == chosen.run.pageCount }) {
                copy = found.copy
            } else {
                copy = HeaderRunV3.decode(try read(offset, chosen.run.pageCount * HeaderPage.length), pageCount: chosen.run.pageCount, fileOffset: offset)
            }
            let status: HeaderPage.Copy
            if let bytes = copy.header, bytes != chosen.bytes {
                status = verified.contains(where: { $0.bytes == bytes })
                    ? .unusable(reason: "run \(Self.name(name)) holds another header that also verifies; run \(Self.name(chosen.run.name))'s (epoch \(chosen.header.epoch)) is used by the rule: the highest epoch, then run A")
                    : .unusable(reason: "run \(Self.name(name)) holds another header than run \(Self.name(chosen.run.name))'s, and it does not verify under the log key the credential opened")
            } else {
                status = copy
            }
            runs.append(Run(offset: offset, pageCount: chosen.run.pageCount, copy: status))
        }
        return runs
    }

    static func name(_ run: Int) -> String { run == 0 ? "A" : "B" }
}
