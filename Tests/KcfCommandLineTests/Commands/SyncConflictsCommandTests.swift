import Foundation
import KeychainFile
import Testing
@testable import kcf

/// `kcf sync-conflicts`: the conflict copies Syncthing, Nextcloud and Dropbox leave are found by name, merged into
/// their keychain, and moved aside only once merged; what cannot be merged stays where it was.
@Suite("kcf sync-conflicts")
struct SyncConflictsCommandTests {
    private var withPassword: [String: String] { ["KCF_PASSWORD": KcfSandbox.password] }

    @Test("Conflict copies are told by the names each tool gives them, and other names are not", arguments: [
        ("vault.sync-conflict-20261129-101500-ABCDEF7.kcf", "vault.kcf"),
        ("my.vault.sync-conflict-20261129-101500-7QXZ2AB.kcf", "my.vault.kcf"),
        ("vault.sync-conflict-20261129-101500-ABCDEF7", "vault"),
        ("vault (conflicted copy 2026-11-29 101600).kcf", "vault.kcf"),
        ("vault (Ann's conflicted copy 2026-11-29).kcf", "vault.kcf"),
        ("vault (Ann's conflicted copy 2026-11-29 (1)).kcf", "vault.kcf"),
        ("my (old) vault (conflicted copy 2026-11-29 101600).kcf", "my (old) vault.kcf"),
    ])
    func names(copy: String, original: String) {
        #expect(SyncConflictName(copy)?.original == original)
    }

    @Test("Names that only look like conflict copies are none", arguments: [
        "vault.kcf", "vault.sync-conflict-2026112-101500-ABCDEF7.kcf", "vault.sync-conflict-20261129-101500-abcdef7.kcf",
        "vault.sync-conflict-20261129-101500-ABCDEF.kcf", ".sync-conflict-20261129-101500-ABCDEF7.kcf",
        "vault (copy 2026-11-29).kcf", "vault (conflicted copy 2026-11-29) old.kcf", " (conflicted copy).kcf",
        "vault (conflicted copy 2026-11-29.kcf",
    ])
    func notNames(name: String) {
        #expect(SyncConflictName(name) == nil)
    }

    @Test("Each tool's copy is merged in and renamed aside; a copy of another keychain and a non-keychain name stay")
    func mergesAndMovesAside() throws {
        let sandbox = try KcfSandbox()
        let folder = sandbox.file("synced")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let vault = folder + "/vault.kcf"
        try sandbox.createKeychain(at: vault)
        func kcf(_ path: String, _ arguments: [String]) throws {
            let result = try sandbox.run(arguments + ["-k", path], extra: withPassword)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        for account in ["keep", "both", "remove"] { try kcf(vault, ["add-generic-password", "-a", account, "-s", "s", "-w", "\(account)-0"]) }
        let syncthing = folder + "/vault.sync-conflict-20261129-101500-ABCDEF7.kcf"
        let nextcloud = folder + "/vault (conflicted copy 2026-11-29 101600).kcf"
        let dropbox = folder + "/vault (Ann's conflicted copy 2026-11-29 (1)).kcf"
        for copy in [syncthing, nextcloud, dropbox] { try Data(try sandbox.keychainBytes(vault)).write(to: URL(fileURLWithPath: copy)) }
        try kcf(syncthing, ["add-generic-password", "-a", "from-syncthing", "-s", "s", "-w", "st"])
        try kcf(syncthing, ["add-generic-password", "-U", "-a", "both", "-s", "s", "-w", "theirs"])
        try kcf(nextcloud, ["add-generic-password", "-a", "from-nextcloud", "-s", "s", "-w", "nc"])
        try kcf(nextcloud, ["delete-generic-password", "-a", "remove", "-s", "s"])
        try kcf(dropbox, ["add-generic-password", "-a", "from-dropbox", "-s", "s", "-w", "db"])
        Thread.sleep(forTimeInterval: 0.01)
        try kcf(vault, ["add-generic-password", "-U", "-a", "both", "-s", "s", "-w", "ours"])
        let stranger = folder + "/vault (conflicted copy 2026-11-30 090000).kcf"
        try sandbox.createKeychain(at: stranger)
        let notes = folder + "/notes.sync-conflict-20261129-101500-ABCDEF7.txt"
        try "n".write(toFile: folder + "/notes.txt", atomically: true, encoding: .utf8)
        try "m".write(toFile: notes, atomically: true, encoding: .utf8)
        for copy in [syncthing, nextcloud, dropbox, stranger] { try? FileManager.default.removeItem(atPath: copy + ".lock") }

        let run = try sandbox.run(["sync-conflicts", folder], extra: withPassword)
        #expect(run.status != 0, "a copy of another keychain was not merged: the run must not say it all worked")
        #expect(run.stderr.contains("vault (conflicted copy 2026-11-30 090000).kcf: not merged"), "\(run.stderr)")

        let merged = try Keychain.open(at: vault, credential: .password(KcfSandbox.password))
        for (account, secret) in [("keep", "keep-0"), ("from-syncthing", "st"), ("from-nextcloud", "nc"), ("from-dropbox", "db"), ("both", "ours")] {
            #expect(try merged.password(forService: "s", account: account) == secret, "\(account)")
        }
        #expect((try? merged.password(forService: "s", account: "remove")) == nil, "the deletion made in a copy is taken")
        // "both" changed here and in the Syncthing copy: its version there is kept as a conflict copy. The other two
        // copies hold "both" as the copies' shared history left it (SPEC.md §43.9): unchanged there, so no copy.
        #expect(run.stdout.contains("base: the history both copies share"), "\(run.stdout)")
        let copies = try merged.conflictCopies()
        #expect(copies.count == 1)
        for copy in copies {
            guard case .string(let account)? = copy.attributes[.account] else { Issue.record("a copy without an account"); continue }
            #expect(account.hasPrefix("both (conflict "))
            #expect(try merged.secret(for: PersistentReference(itemID: copy.copyID)) == Array("theirs".utf8))
        }
        for copy in [syncthing, nextcloud, dropbox] {
            #expect(!FileManager.default.fileExists(atPath: copy), "\(copy) merged, so moved aside")
            #expect(FileManager.default.fileExists(atPath: copy + ".merged"))
            #expect(!FileManager.default.fileExists(atPath: copy + ".lock"), "no lock file left for the syncing tool to carry")
        }
        #expect(FileManager.default.fileExists(atPath: stranger), "what could not be merged stays")
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "m")

        // Again, with the stranger gone: nothing to do, exit 0, the keychain unchanged.
        try FileManager.default.removeItem(atPath: stranger)
        let bytes = try sandbox.keychainBytes(vault)
        let again = try sandbox.run(["sync-conflicts", folder], extra: withPassword)
        #expect(again.status == 0 && again.stdout.contains("no conflict copies"), "\(again.stdout)\(again.stderr)")
        #expect(try sandbox.keychainBytes(vault) == bytes)
    }

    @Test("A copy of a copy is merged into the keychain too; a symbolic link named like a copy is not opened, and the run fails")
    func nestedCopiesAndLinks() throws {
        let sandbox = try KcfSandbox()
        let folder = sandbox.file("synced")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let vault = folder + "/a.kcf"
        try sandbox.createKeychain(at: vault)
        let first = folder + "/a (conflicted copy 2026-01-01 000001).kcf"
        let second = folder + "/a (conflicted copy 2026-01-01 000001) (conflicted copy 2026-01-02 000001).kcf"
        let syncthing = folder + "/a.sync-conflict-20260101-000001-ABCDEFG.sync-conflict-20260102-000001-ZZZZZZZ.kcf"
        try Data(try sandbox.keychainBytes(vault)).write(to: URL(fileURLWithPath: first))
        #expect(try sandbox.run(["add-generic-password", "-a", "bob", "-s", "s", "-w", "b", "-k", first], extra: withPassword).status == 0)
        try Data(try sandbox.keychainBytes(first)).write(to: URL(fileURLWithPath: second))
        #expect(try sandbox.run(["add-generic-password", "-a", "carol", "-s", "s", "-w", "c", "-k", second], extra: withPassword).status == 0)
        try Data(try sandbox.keychainBytes(vault)).write(to: URL(fileURLWithPath: syncthing))
        #expect(try sandbox.run(["add-generic-password", "-a", "dan", "-s", "s", "-w", "d", "-k", syncthing], extra: withPassword).status == 0)
        for copy in [first, second, syncthing] { try FileManager.default.removeItem(atPath: copy + ".lock") }

        let run = try sandbox.run(["sync-conflicts", vault], extra: withPassword)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let merged = try Keychain.open(at: vault, credential: .password(KcfSandbox.password))
        for account in ["bob", "carol", "dan"] { #expect(try merged.password(forService: "s", account: account) != nil, "\(account)") }
        for copy in [first, second, syncthing] { #expect(FileManager.default.fileExists(atPath: copy + ".merged")) }

        // A link another machine planted, pointing out of the folder: not opened, no lock file made at its target.
        let target = sandbox.file("elsewhere.kcf")
        try sandbox.createKeychain(at: target)
        try FileManager.default.removeItem(atPath: target + ".lock")
        let link = folder + "/a (conflicted copy 2026-01-03 000001).kcf"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let refused = try sandbox.run(["sync-conflicts", folder], extra: withPassword)
        #expect(refused.status != 0 && refused.stderr.contains("not a regular file"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target + ".lock"))
        #expect(!FileManager.default.fileExists(atPath: link + ".merged"))
    }

    @Test("A copy whose merge fails stays where it is: a format version 1 keychain refuses, and nothing is renamed")
    func failedMergeKeepsTheCopy() throws {
        let sandbox = try KcfSandbox()
        let folder = sandbox.file("synced")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let vault = folder + "/old.kcf"
        try sandbox.createKeychain(at: vault, formatVersion: 1)
        let copy = folder + "/old.sync-conflict-20261129-101500-ABCDEF7.kcf"
        try Data(try sandbox.keychainBytes(vault)).write(to: URL(fileURLWithPath: copy))
        let run = try sandbox.run(["sync-conflicts", vault], extra: withPassword)
        #expect(run.status == 252, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: copy) && !FileManager.default.fileExists(atPath: copy + ".merged"))
        let dry = try sandbox.run(["sync-conflicts", "--dry-run", vault], extra: withPassword)
        #expect(dry.status == 0 && dry.stdout.contains("a Syncthing conflict copy of old.kcf"))
    }
}
