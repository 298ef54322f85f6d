@testable import KeychainFile

/// What the open targets check differently for the format version each opens. The shared checks
/// (``OpenedKeychainChecks``, ``RefreshChecks``, ``KeychainContents``) hold every check both versions promise and
/// call these where one version's reader or writer promises more, so that each target keeps only that.
protocol FormatChecks {
    /// The format version every file the target opens has (a compaction writes ``Keychain/formatVersion``).
    static var formatVersion: Int { get }

    /// The format version a compaction writes: ``Keychain/formatVersion`` (a version 1 file is upgraded), unless the
    /// format has no form in it (version 3's scoped credentials).
    static var compactedFormatVersion: Int { get }

    /// Whether a compaction writes the items in the order they were added, so that a reader of the compacted file
    /// lists them in that order (versions 1 and 2); version 3 sorts each batch of a rewrite by group (SpecVersion3Draft
    /// D4), and the items are then compared by id alone.
    static var compactionKeepsAddedOrder: Bool { get }

    /// Checks `secret`, as a read of `stored` from `log` gave it, as far as the read itself does not: throws if
    /// its box does not authenticate.
    static func checkSecret(_ secret: [UInt8], of stored: StoredItem, in log: any KeychainLog) throws

    /// The state of the opened log to trace besides its items, head and torn tail; `nil` for none.
    static func describeLog(of keychain: Keychain) -> String?

    /// Salvage and recovering opens of `bytes` (the file `store` holds): after a full open that failed with
    /// damage or set the newest records aside (`opened` is `nil`), and after one that succeeded (`opened` is what
    /// it read), before any write.
    static func checkSalvage(
        _ bytes: [UInt8], _ store: inout FuzzStore, credential: Credential, opened: (contents: KeychainContents, head: Head)?)

    /// Catching up and a fresh open both refused the same file: checks that they agree on why.
    static func checkRefusalsAgree(opening: KeychainError, catchingUp: KeychainError)
}

extension FormatChecks {
    static var compactedFormatVersion: Int { Keychain.formatVersion }
    static var compactionKeepsAddedOrder: Bool { true }
}
