@_spi(KeychainFileInternals) import KeychainCrypto

/// A version 3 header as a log keeps it once verified: the chosen copy, the epoch's log keys and C0, the key table
/// and root key of a full holder, and what each run held.
///
/// Made by an open with a credential (``OpenedHeaderV3/verified``), or, when a process catches up with a file another
/// process rewrote, with the keys it holds (``init(read:logKey:root:)``): a compaction keeps `K_log` and `R`, so
/// the new header verifies under them and no key derivation — the costly part of opening, on purpose — is spent
/// (SPEC.md §16: "opens it … with the master key it holds"). A rewrite that renewed a key (a rotation, a group
/// added) is not opened that way, and the log falls back to its credential.
///
/// ```swift
/// if let again = try? VerifiedHeaderV3(read: read, logKey: held.logKey, root: held.root) { … }  // no derivation
/// ```
struct VerifiedHeaderV3: Sendable {
    let header: FileHeaderV3
    /// The chosen copy's bytes.
    let headerBytes: [UInt8]
    /// How many pages each run has.
    let pageCount: Int
    let logKey: SymmetricKey
    let logKeys: LogKeysV3
    /// C0, the chain value before the epoch's first record.
    let initialChain: [UInt8]
    /// The root key and the key table it opens, for a full holder; `nil` for a scoped one.
    let root: SymmetricKey?
    let keyTable: KeyTableV3?
    /// The groups a scoped holder's grant gives; `nil` for a full holder, whose groups are the key table's.
    let scope: [KeySetV3.Group]?
    /// Runs A and B where the chosen header's page count puts them, each `.unusable` when it holds anything else.
    let runs: [OpenedHeaderV3.Run]

    init(
        header: FileHeaderV3, headerBytes: [UInt8], pageCount: Int, logKey: SymmetricKey, logKeys: LogKeysV3, initialChain: [UInt8],
        root: SymmetricKey?, keyTable: KeyTableV3?, scope: [KeySetV3.Group]?, runs: [OpenedHeaderV3.Run]
    ) {
        self.header = header
        self.headerBytes = headerBytes
        self.pageCount = pageCount
        self.logKey = logKey
        self.logKeys = logKeys
        self.initialChain = initialChain
        self.root = root
        self.keyTable = keyTable
        self.scope = scope
        self.runs = runs
    }

    /// Verifies the header runs `read` gives with a log key (and root key) held from an earlier open, by
    /// ``OpenedHeaderV3``'s rule: of the copies whose MAC verifies under `logKey`, the highest epoch, then run A.
    ///
    /// - Parameters:
    ///   - read: reads `count` bytes at a file offset, fewer at the end of the file.
    ///   - logKey: the log key `K_log` held.
    ///   - root: the root key held by a full holder, which must open the chosen copy's key table; `nil` for a scoped one.
    ///   - scope: a scoped holder's groups, kept as they are (a scoped holder's keys change only by a grant, which a
    ///     rewrite that renewed them writes under a new log key); `nil` for a full holder.
    /// - Throws: `.wrongCredentials` when the held keys do not open the header — no copy verifies under `logKey`, a
    ///   copy of a later epoch does not, or `root` does not open the key table: the keys were renewed, and only the
    ///   credential can say more; `.corrupted` as ``OpenedHeaderV3/candidates(read:)``; whatever `read` throws.
    init(
        read: (_ offset: Int, _ count: Int) throws(KeychainError) -> [UInt8], logKey: SymmetricKey, root: SymmetricKey?,
        scope: [KeySetV3.Group]? = nil
    ) throws(KeychainError) {
        let (located, candidates) = try OpenedHeaderV3.candidates(read: read)
        var verified: [(candidate: OpenedHeaderV3.Candidate, keys: LogKeysV3)] = []
        for candidate in candidates {
            let keys = try candidate.header.logKeys(logKey: logKey)
            guard FileHeaderV3.verifyMAC(candidate.bytes, headerKey: keys.header) else { continue }
            guard candidate.header.rewriteEnd != 0 || candidate.header.rewriteHeadChain == candidate.header.initialChainValue(headerKey: keys.header) else {
                continue
            }
            verified.append((candidate, keys))
        }
        guard let chosen = verified.max(by: { OpenedHeaderV3.precedes($1.candidate, $0.candidate) }),
              !candidates.contains(where: { $0.header.epoch > chosen.candidate.header.epoch })
        else {
            throw .wrongCredentials
        }
        let copy = chosen.candidate
        if let root {
            do throws(SlotProblemV3) {
                keyTable = try KeyTableV3.open(copy.header.sealedKeyTable, root: root, fileID: copy.header.fileID)
            } catch {
                throw .wrongCredentials
            }
        } else {
            keyTable = nil
        }
        header = copy.header
        headerBytes = copy.bytes
        pageCount = copy.run.pageCount
        self.logKey = logKey
        logKeys = chosen.keys
        initialChain = copy.header.initialChainValue(headerKey: chosen.keys.header)
        self.root = root
        self.scope = root == nil ? scope : nil
        runs = try OpenedHeaderV3.runs(chosen: copy, located: located, verified: verified.map(\.candidate), read: read)
    }
}
