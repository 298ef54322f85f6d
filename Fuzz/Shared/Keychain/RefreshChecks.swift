@testable import KeychainFile

/// Catching up (SPEC.md §16) must agree with opening: a keychain opened on the file as it stood before some
/// record, then shown the file as another process's appends left it, ends in the same state as a fresh open of
/// the final file — the same items, head and torn tail; and where opening refuses the file, catching up refuses
/// it too, for the reason `Version` requires (``FormatChecks/checkRefusalsAgree(opening:catchingUp:)``).
enum RefreshChecks<Version: FormatChecks> {
    static func run(from earlier: [UInt8], to later: [UInt8], credential: Credential) {
        guard earlier != later else { return }
        var whole = FuzzStore(later)
        let expected: Result<(KeychainContents, Head, TornTail?), KeychainError>
        do {
            let keychain = try whole.open(with: credential)
            expected = .success((KeychainContents(of: keychain, Version.self), keychain.head, keychain.tornTail))
        } catch {
            expected = .failure(error)
        }

        var store = FuzzStore(earlier)
        guard let keychain = try? store.open(with: credential) else { return }
        store.overwrite(with: later)
        trace("catching up from \(earlier.count) to \(later.count) bytes; opening the whole file gave \(expected.map { "head \($0.1)" })")
        do {
            try keychain.refresh()
            switch expected {
            case .success(let (contents, head, tornTail)):
                Invariant.check(keychain.head == head, "catching up reached head \(keychain.head), opening \(head)")
                Invariant.check(keychain.tornTail == tornTail, "catching up found torn tail \(String(describing: keychain.tornTail)), opening \(String(describing: tornTail))")
                Invariant.check(KeychainContents(of: keychain, Version.self) == contents, "catching up gave other items than opening")
            case .failure(let error):
                Invariant.check(false, "catching up accepted what opening rejects (\(error))")
            }
        } catch {
            switch expected {
            case .success: Invariant.check(false, "catching up threw \(error); opening succeeded")
            case .failure(let opening): Version.checkRefusalsAgree(opening: opening, catchingUp: error)
            }
        }
    }
}
