@testable import KeychainFile

/// What the open-replay target checks of version 1 files besides the shared checks: that a secret a read gives
/// is the one its box authenticates (a version 1 read decrypts without checking the tag), salvage and recovering
/// opens (``SalvageChecks``), and that catching up and opening report damage at the same offset.
enum FormatV1Checks: FormatChecks {
    static let formatVersion = 1

    /// Secrets were tag-checked during replay, so checking one again must not fail: a read decrypts without
    /// checking (``SealedSecret/decrypt(using:)``), so this is what catches a replay that let an unverified box
    /// into the index.
    static func checkSecret(_ secret: [UInt8], of stored: StoredItem, in log: any KeychainLog) throws {
        guard let context = (log as? RecordLog)?.context else { return }
        let sealed = stored.secret
        let aad = BoxAAD.make(
            fileID: context.fileID, epoch: context.epoch, sequence: sealed.sequence, kind: sealed.kind,
            entryCount: sealed.entryCount, entryIndex: sealed.entryIndex, role: .secret, itemID: stored.id,
            previousChain: sealed.previousChain)
        let verified = try sealed.open(using: context.boxKey, authenticating: aad)
        Invariant.check(verified == secret, "the secret of item \(stored.id) reads differently from its verified box")
    }

    static func describeLog(of keychain: Keychain) -> String? { nil }

    /// A damaged file or one whose final record may hold acknowledged data: salvage keeps what authenticates and
    /// a recovering open serves it. A file that opened: salvage keeps all of it.
    static func checkSalvage(
        _ bytes: [UInt8], _ store: inout FuzzStore, credential: Credential, opened: (contents: KeychainContents, head: Head)?
    ) {
        SalvageChecks.checkSalvage(bytes, credential: credential, opened: opened)
        if opened == nil { SalvageChecks.checkRecovery(&store, credential: credential) }
    }

    /// Both refuse damage, at the same offset.
    static func checkRefusalsAgree(opening: KeychainError, catchingUp: KeychainError) {
        switch (opening, catchingUp) {
        case (.corrupted(let openOffset, _), .corrupted(let offset, _)):
            Invariant.check(offset == openOffset, "catching up reports damage at \(offset), opening at \(openOffset)")
        default:
            Invariant.check(false, "catching up threw \(catchingUp); opening threw \(opening)")
        }
    }
}
