@testable import KeychainFile

/// Catching up (SPEC.md §16) must agree with opening: a keychain opened on the first records of a file,
/// then shown the rest as if another process had appended it, ends in the same state — the same items,
/// head and torn tail, or the same `corrupted` error — as a fresh open of the whole file.
enum RefreshChecks {
    static func run(_ bytes: [UInt8], splitAt split: Int, credential: Credential) {
        guard split < bytes.count else { return }
        var whole = FuzzKeychain(bytes)
        let expected: Result<(KeychainContents, Head, TornTail?), KeychainError>
        do {
            let keychain = try whole.open(with: credential)
            expected = .success((KeychainContents(of: keychain), keychain.head, keychain.tornTail))
        } catch {
            expected = .failure(error)
        }

        var store = FuzzKeychain(Array(bytes[..<split]))
        guard let keychain = try? store.open(with: credential) else { return }
        do {
            let handle = try store.fileSystem.openExisting(FuzzKeychain.path)
            try Array(bytes[split...]).withBytes { (raw) throws(KeychainError) in try handle.writeAll(raw, at: split) }
            handle.close()
        } catch {
            Invariant.check(false, "appending to the in-memory file failed: \(error)")
        }
        trace("catching up from byte \(split) of \(bytes.count); opening the whole file gave \(expected.map { "head \($0.1)" })")
        do {
            try keychain.refresh()
            switch expected {
            case .success(let (contents, head, tornTail)):
                Invariant.check(keychain.head == head, "catching up reached head \(keychain.head), opening \(head)")
                Invariant.check(keychain.tornTail == tornTail, "catching up found torn tail \(String(describing: keychain.tornTail)), opening \(String(describing: tornTail))")
                Invariant.check(KeychainContents(of: keychain) == contents, "catching up gave other items than opening")
            case .failure(let error):
                Invariant.check(false, "catching up accepted what opening rejects (\(error))")
            }
        } catch {
            switch (expected, error) {
            case (.failure(.corrupted(let openOffset, _)), .corrupted(let offset, _)):
                Invariant.check(offset == openOffset, "catching up reports damage at \(offset), opening at \(openOffset)")
            default:
                Invariant.check(false, "catching up threw \(error); opening gave \(expected)")
            }
        }
    }
}
