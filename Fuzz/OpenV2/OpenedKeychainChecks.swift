import Foundation
@testable import KeychainFile

/// What the harness does with bytes once they are a version 2 file: open them, and after a successful open walk
/// every read path, reopen, write to the file and compact it, checking that each step agrees with the first
/// open. A thrown `KeychainError` from the open is expected for hostile input; a step that fails after a
/// successful open is a finding. (Recovering opens and salvage of version 2 are not built: they refuse.)
enum OpenedKeychainChecks {
    /// How much work to do after a successful open.
    enum Depth {
        /// Read paths only.
        case read
        /// Read paths, then a reopen, an append and a compaction, each compared.
        case full
    }

    static func run(_ bytes: [UInt8], credential: Credential, depth: Depth) {
        var store = FuzzStore(bytes)
        let keychain: Keychain
        do {
            keychain = try store.open(with: credential)
        } catch {
            trace("\(credential.traceName): \(error)")
            return
        }
        let contents = KeychainContents(of: keychain)
        trace("\(credential.traceName): opened, \(contents.items.count) items, head \(keychain.head), torn tail \(keychain.tornTail.map(String.init(describing:)) ?? "none")")
        trace("\(credential.traceName): log \(describe(keychain))")
        Invariant.check(keychain.withLock { keychain.log.formatVersion } == 2, "a version 2 file opened as version \(keychain.withLock { keychain.log.formatVersion })")
        Invariant.check(contents.items.count == keychain.count, "index count \(keychain.count) ≠ \(contents.items.count) items")
        ReadPathChecks.run(keychain, contents: contents)
        guard depth == .full else { return }
        checkReopen(&store, credential: credential, contents: contents, head: keychain.head)
        // The newest commit's records do not verify and may be acknowledged (Docs/FormatVersion2.md §3 rule 2):
        // no write may cut them off.
        if keychain.tornTail?.mayHoldAcknowledgedData == true {
            checkWritesRefused(store, keychain)
            return
        }
        checkAppend(&store, keychain, credential: credential, contents: contents)
        checkCompaction(&store, keychain, credential: credential)
    }

    /// The log's ends, slots and repairs, for tracing.
    static func describe(_ keychain: Keychain) -> String {
        guard let log = keychain.withLock({ keychain.log as? RecordLogV2 }) else { return "not version 2" }
        let healing = log.state.log
        func seal(_ slot: CommitSlot?) -> String {
            slot.map { "counter \($0.seal.counter) written \($0.seal.writtenEnd) committed \($0.seal.committedEnd)\($0.isTorn ? " torn" : "")" } ?? "none"
        }
        return "written end \(healing.writtenEnd), committed end \(healing.committedEnd), rewrite end \(healing.rewriteEnd); "
            + "newest slot \(seal(healing.newest)), older \(seal(healing.older)); refusal \(healing.appendRefusal.map { "\($0)" } ?? "none"); "
            + "repaired chunks \(log.repairedChunks); file \(log.state.size) bytes"
    }

    /// The ranges of bytes that differ between two versions of the file (for tracing), and their sizes.
    static func changedRanges(_ old: [UInt8], _ new: [UInt8]) -> String {
        var ranges: [Range<Int>] = []
        for index in 0..<max(old.count, new.count) where index >= old.count || index >= new.count || old[index] != new[index] {
            if let last = ranges.last, last.upperBound == index { ranges[ranges.count - 1] = last.lowerBound..<(index + 1) } else { ranges.append(index..<(index + 1)) }
        }
        return "\(ranges.prefix(12).map { "\($0.lowerBound)..<\($0.upperBound)" }.joined(separator: ", "))\(ranges.count > 12 ? " …" : ""); size \(old.count) → \(new.count)"
    }

    /// Neither an append nor a compaction changes a file whose newest commit's records are set aside.
    static func checkWritesRefused(_ store: FuzzStore, _ keychain: Keychain) {
        let before = store.bytes()
        if (try? keychain.add(GenericPassword(service: "fuzz.harness.invalid", account: "appended", password: "appended"))) != nil {
            Invariant.check(false, "an append cut off records set aside as possibly acknowledged")
        }
        if (try? keychain.compact()) != nil {
            Invariant.check(false, "a compaction dropped records set aside as possibly acknowledged")
        }
        Invariant.check(store.bytes() == before, "a refused write changed the file")
    }

    /// Opening the same bytes again gives the same items and head.
    static func checkReopen(_ store: inout FuzzStore, credential: Credential, contents: KeychainContents, head: Head) {
        do {
            let again = try store.open(with: credential)
            Invariant.check(again.head == head, "reopening gave head \(again.head), first \(head)")
            Invariant.check(KeychainContents(of: again) == contents, "reopening gave other items")
        } catch {
            Invariant.check(false, "a file that opened does not open again: \(error)")
        }
    }

    /// An add after open (which writes back repairs and cuts a remnant or an undone transaction) is read back by
    /// a fresh open, after the earlier items.
    static func checkAppend(_ store: inout FuzzStore, _ keychain: Keychain, credential: Credential, contents: KeychainContents) {
        let before = store.bytes()
        do {
            try keychain.add(GenericPassword(service: "fuzz.harness.invalid", account: "appended", password: "appended"))
        } catch .duplicateItem {
            return
        } catch {
            Invariant.check(false, "adding an item to a file that opened failed: \(error)")
        }
        trace("appended: \(describe(keychain)); bytes changed: \(changedRanges(before, store.bytes()))")
        do {
            let again = try store.open(with: credential)
            Invariant.check(again.tornTail == nil, "a torn tail survived an append: \(again.tornTail!)")
            Invariant.check(again.head == keychain.head, "after an append, reopening gave head \(again.head), writer \(keychain.head)")
            let reread = KeychainContents(of: again)
            Invariant.check(reread.items.count == contents.items.count + 1, "after an append, \(reread.items.count) items, expected \(contents.items.count + 1)")
            Invariant.check(Array(reread.items.prefix(contents.items.count)) == contents.items, "an append changed earlier items")
            Invariant.check(KeychainContents(of: keychain) == reread, "the writer and a fresh open disagree after an append")
        } catch {
            Invariant.check(false, "after an append the file does not open: \(error)")
        }
    }

    /// Compaction keeps every item and the format version, and the compacted file opens with the same items.
    static func checkCompaction(_ store: inout FuzzStore, _ keychain: Keychain, credential: Credential) {
        let before = KeychainContents(of: keychain)
        do {
            try keychain.compact()
        } catch {
            Invariant.check(false, "compaction failed: \(error)")
            return
        }
        Invariant.check(KeychainContents(of: keychain) == before, "compaction changed the items in memory")
        do {
            let again = try store.open(with: credential)
            Invariant.check(again.withLock { again.log.formatVersion } == 2, "compaction wrote another format version")
            Invariant.check(again.tornTail == nil, "the compacted file has a torn tail: \(again.tornTail!)")
            Invariant.check(KeychainContents(of: again) == before, "the compacted file holds other items")
        } catch {
            Invariant.check(false, "the compacted file does not open: \(error)")
        }
    }
}
