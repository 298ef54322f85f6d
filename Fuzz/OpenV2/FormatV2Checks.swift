@testable import KeychainFile

/// What the open-v2 target checks of version 2 files besides the shared checks: only that they are version 2
/// (``FormatChecks/formatVersion``), and it traces the log's ends, slots and repairs. A version 2 read checks the
/// secret box's tag itself; this target checks neither salvage nor recovering opens of version 2 files; and it
/// checks only that catching up refuses what opening refuses, not that both give the same reason.
enum FormatV2Checks: FormatChecks {
    static let formatVersion = 2

    /// The replay checked each secret box against the digest its page names, and the read decrypted the box,
    /// checking its tag: nothing is left to check.
    static func checkSecret(_ secret: [UInt8], of stored: StoredItem, in log: any KeychainLog) {}

    /// The log's ends, slots and repairs.
    static func describeLog(of keychain: Keychain) -> String? {
        guard let log = keychain.withLock({ keychain.log as? RecordLogV2 }) else { return "not version 2" }
        let healing = log.state.log
        func seal(_ slot: CommitSlot?) -> String {
            slot.map { "counter \($0.seal.counter) written \($0.seal.writtenEnd) committed \($0.seal.committedEnd)\($0.isTorn ? " torn" : "")" } ?? "none"
        }
        return "written end \(healing.writtenEnd), committed end \(healing.committedEnd), rewrite end \(healing.rewriteEnd); "
            + "newest slot \(seal(healing.newest)), older \(seal(healing.older)); refusal \(healing.appendRefusal.map { "\($0)" } ?? "none"); "
            + "repaired chunks \(log.repairedChunks); file \(log.state.size) bytes"
    }

    static func checkSalvage(
        _ bytes: [UInt8], _ store: inout FuzzStore, credential: Credential, opened: (contents: KeychainContents, head: Head)?
    ) {}

    static func checkRefusalsAgree(opening: KeychainError, catchingUp: KeychainError) {}
}
