import KeychainFile

/// The demo's later steps: update, delete, compact, reopen, and a wrong password.
extension DemoSession {
    /// Step 4: changes the generic password's secret and comment.
    mutating func update() throws(CommandError) {
        narrator.step("Update the generic password", command: "kcf add-generic-password -U -a ann -s mail.example.com -j \"rotated\" -w")
        let keychain = self.keychain
        let query = Query.genericPassword(service: Self.service, account: Self.account)
        let changed = try keychainCall { () throws(KeychainError) in
            try keychain.update(query, setting: [.comment: .string("rotated by kcf demo")], secret: Array("second mail password".utf8))
        }
        let item = try keychainCall { () throws(KeychainError) in try keychain.find(GenericPassword.self, matching: query)[0] }
        narrator.detail("updated", "\(changed) item")
        narrator.detail("secret now", (item.passwordString ?? "").quotedForDemo)
        narrator.detail("comment now", (item.comment ?? "").quotedForDemo)
        guard item.passwordString == "second mail password" else { throw .failed("the update was not read back") }
    }

    /// Step 5: deletes the internet password and shows that it is gone.
    mutating func delete() throws(CommandError) {
        narrator.step("Delete the internet password", command: "kcf delete-internet-password -s example.com")
        let keychain = self.keychain
        let query = Query.internetPassword(server: Self.server)
        let deleted = try keychainCall { () throws(KeychainError) in try keychain.delete(query) }
        narrator.detail("deleted", "\(deleted) item; \(keychain.count) items left")
        let gone: Bool = { () -> Bool in
            do throws(KeychainError) {
                _ = try keychain.search(query)
                return false
            } catch {
                return error == .itemNotFound
            }
        }()
        narrator.detail("search again", gone ? "item not found (kcf exits 44, as security does)" : "STILL FOUND")
        guard gone else { throw .failed("the deleted item is still found") }
    }

    /// Step 6: compacts and prints the statistics before and after.
    mutating func compact() throws(CommandError) {
        narrator.step("Compact", command: "kcf compact")
        let keychain = self.keychain
        let result = try keychainCall { () throws(KeychainError) in try keychain.compact() }
        narrator.detail("before", "\(result.before.fileSize) bytes, \(result.before.deadBytes) dead (the old secret, the deleted item), epoch \(result.before.epoch)")
        narrator.detail("after", "\(result.after.fileSize) bytes, \(result.after.deadBytes) dead, epoch \(result.after.epoch)")
    }

    /// Step 7: opens the file afresh, as another process would, and reads every secret.
    mutating func reopen() throws(CommandError) {
        narrator.step("Reopen the file and verify it", command: "kcf verify")
        let path = self.path
        let reopened = try keychainCall { () throws(KeychainError) in
            try Keychain.open(at: path, credential: .password(DemoCommand.password))
        }
        keychain = reopened
        var secrets = 0
        for (queryClass, _) in KeychainListing.classes {
            secrets += try KeychainListing.all(queryClass, in: reopened, returning: [.data]).count
        }
        narrator.detail("head", "\(reopened.head)")
        narrator.detail("epoch", "\(reopened.head.epoch) (1 when created, +1 for the compaction)")
        narrator.detail("items", "\(reopened.count); \(secrets) secrets decrypted and authenticated")
        narrator.detail("torn tail", reopened.tornTail.map { "\($0)" } ?? "none")
        let generic = try keychainCall { () throws(KeychainError) in
            try reopened.find(GenericPassword.self, matching: .genericPassword(service: Self.service, account: Self.account))[0]
        }
        narrator.detail("generic password", "secret \((generic.passwordString ?? "").quotedForDemo) survived the compaction")
    }

    /// Step 8: shows that another password does not open the file.
    mutating func wrongPassword() throws(CommandError) {
        narrator.step("Try a wrong password", command: "kcf find-generic-password -s mail.example.com")
        let path = self.path
        let refused: Bool = { () -> Bool in
            do throws(KeychainError) {
                _ = try Keychain.open(at: path, credential: .password("not the demo password"))
                return false
            } catch {
                return error == .wrongCredentials
            }
        }()
        narrator.detail("result", refused ? "refused: wrong password (kcf exits 51)" : "OPENED")
        guard refused else { throw .failed("a wrong password opened the keychain") }
    }
}
