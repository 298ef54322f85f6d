@testable import KeychainFile

/// What the open-v3 target checks of version 3 files besides the shared checks: that they are version 3, and stay
/// version 3 when compacted (``FormatChecks/compactedFormatVersion``); it traces the log's scope and size. A version 3
/// read checks the secret box's tag itself; this target checks neither salvage nor recovering opens, and only that
/// catching up refuses what opening refuses, not that both give the same reason. What scoped credentials promise
/// is ``ScopeChecks``.
enum FormatV3Checks: FormatChecks {
    static let formatVersion = 3
    /// A version 3 keychain is compacted into a version 3 file: its scoped credentials have no version 2 form.
    static let compactedFormatVersion = 3
    /// A rewrite sorts each batch of items by group (SpecVersion3Draft D4).
    static let compactionKeepsAddedOrder = false

    /// The read decrypted the box, checking its tag: nothing is left to check.
    static func checkSecret(_ secret: [UInt8], of stored: StoredItem, in log: any KeychainLog) {}

    static func describeLog(of keychain: Keychain) -> String? {
        guard let log = keychain.withLock({ keychain.log as? RecordLogV3 }) else { return "not version 3" }
        return "scope \(keychain.scope); groups followed \(log.state.groups.byKeyID.keys.sorted()); root \(log.state.root == nil ? "absent" : "held"); file \(log.state.size) bytes"
    }

    static func checkSalvage(
        _ bytes: [UInt8], _ store: inout FuzzStore, credential: Credential, opened: (contents: KeychainContents, head: Head)?
    ) {}

    static func checkRefusalsAgree(opening: KeychainError, catchingUp: KeychainError) {}
}
