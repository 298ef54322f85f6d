import Foundation
@testable import KeychainFile

/// What the open targets do with bytes once they are a keychain file: open them, and after a successful open
/// walk every read path, reopen, write to the file and compact it, checking that each step agrees with the first
/// open; salvage and recovering opens as `Version` requires (``FormatChecks``). A thrown `KeychainError` from
/// the open is expected for hostile input; a step that fails after a successful open is a finding.
enum OpenedKeychainChecks<Version: FormatChecks> {
    /// How much work to do after a successful open.
    enum Depth {
        /// Read paths only.
        case read
        /// Read paths, then a reopen, salvage, an append and a compaction, each compared.
        case full
    }

    /// A file the target sealed itself: written to the path in FUZZ_WRITE_KEYCHAIN if that is set (a whole-file
    /// seed, or a finding as a regression fixture), then opened with ``FuzzCredentials``' key (every check) and
    /// password (reads only).
    static func runSealed(_ image: [UInt8]) {
        if let path = ProcessInfo.processInfo.environment["FUZZ_WRITE_KEYCHAIN"] {
            _ = FileManager.default.createFile(atPath: path, contents: Data(image))
        }
        run(image, credential: FuzzCredentials.key, depth: .full)
        run(image, credential: FuzzCredentials.password, depth: .read)
    }

    static func run(_ bytes: [UInt8], credential: Credential, depth: Depth) {
        var store = FuzzStore(bytes)
        let keychain: Keychain
        do {
            keychain = try store.open(with: credential)
        } catch {
            trace("\(credential.traceName): \(error)")
            if depth == .full, case .corrupted = error {
                Version.checkSalvage(bytes, &store, credential: credential, opened: nil)
            }
            return
        }
        let contents = KeychainContents(of: keychain, Version.self)
        trace("\(credential.traceName): opened, \(contents.items.count) items, head \(keychain.head), torn tail \(keychain.tornTail.map(String.init(describing:)) ?? "none")")
        if let log = Version.describeLog(of: keychain) { trace("\(credential.traceName): log \(log)") }
        let version = keychain.withLock { keychain.log.formatVersion }
        Invariant.check(version == Version.formatVersion, "a version \(Version.formatVersion) file opened as version \(version)")
        Invariant.check(contents.items.count == keychain.count, "index count \(keychain.count) ≠ \(contents.items.count) items")
        ReadPathChecks.run(keychain, contents: contents)
        guard depth == .full else { return }
        checkReopen(&store, credential: credential, contents: contents, head: keychain.head)
        // The newest records may hold acknowledged data (SPEC.md §9.3; Docs/FormatVersion2.md §3 rule 2): salvage
        // and recovery read what of them authenticates, and no write may cut them off.
        if keychain.tornTail?.mayHoldAcknowledgedData == true {
            Version.checkSalvage(bytes, &store, credential: credential, opened: nil)
            checkWritesRefused(store, keychain, bytes: bytes)
            return
        }
        Version.checkSalvage(bytes, &store, credential: credential, opened: (contents, keychain.head))
        checkAppend(&store, keychain, credential: credential, contents: contents)
        checkCompaction(&store, keychain, credential: credential)
    }

    /// Opening the same bytes again gives the same items and head.
    static func checkReopen(_ store: inout FuzzStore, credential: Credential, contents: KeychainContents, head: Head) {
        do {
            let again = try store.open(with: credential)
            Invariant.check(again.head == head, "reopening gave head \(again.head), first \(head)")
            Invariant.check(KeychainContents(of: again, Version.self) == contents, "reopening gave other items")
        } catch {
            Invariant.check(false, "a file that opened does not open again: \(error)")
        }
    }

    /// Neither an append nor a compaction changes a file whose newest records may hold acknowledged data, and
    /// nothing before them (opening, reopening, salvage, recovery) did either: the file is still `bytes`.
    static func checkWritesRefused(_ store: FuzzStore, _ keychain: Keychain, bytes: [UInt8]) {
        let before = store.bytes()
        Invariant.check(before == bytes, "a file whose newest records may hold acknowledged data changed before any write")
        if (try? keychain.add(GenericPassword(service: "fuzz.harness.invalid", account: "appended", password: "appended"))) != nil {
            Invariant.check(false, "an append cut off records that may hold acknowledged data")
        }
        if (try? keychain.compact()) != nil {
            Invariant.check(false, "a compaction dropped records that may hold acknowledged data")
        }
        Invariant.check(store.bytes() == before, "a refused write changed the file")
    }

    /// An add after open (which cuts off a torn tail — and in version 2 writes back repairs and cuts a remnant or
    /// an undone transaction) is read back by a fresh open, after the earlier items, as the writer holds it.
    static func checkAppend(_ store: inout FuzzStore, _ keychain: Keychain, credential: Credential, contents: KeychainContents) {
        let before = tracing ? store.bytes() : []
        do {
            try keychain.add(GenericPassword(service: "fuzz.harness.invalid", account: "appended", password: "appended"))
        } catch .duplicateItem {
            return
        } catch {
            Invariant.check(false, "adding an item to a file that opened failed: \(error)")
        }
        trace("appended: \(Version.describeLog(of: keychain) ?? "head \(keychain.head)"); bytes changed: \(changedRanges(before, store.bytes()))")
        do {
            let again = try store.open(with: credential)
            Invariant.check(again.tornTail == nil, "a torn tail survived an append: \(again.tornTail!)")
            Invariant.check(again.head == keychain.head, "after an append, reopening gave head \(again.head), writer \(keychain.head)")
            let reread = KeychainContents(of: again, Version.self)
            Invariant.check(reread.items.count == contents.items.count + 1, "after an append, \(reread.items.count) items, expected \(contents.items.count + 1)")
            Invariant.check(Array(reread.items.prefix(contents.items.count)) == contents.items, "an append changed earlier items")
            Invariant.check(KeychainContents(of: keychain, Version.self) == reread, "the writer and a fresh open disagree after an append")
        } catch {
            Invariant.check(false, "after an append the file does not open: \(error)")
        }
    }

    /// Compaction keeps every item and writes the version `Version` names (a version 1 file is upgraded, SPEC.md
    /// §12), and the compacted file opens with the same items — in the same order where `Version` keeps it — and no
    /// torn tail.
    static func checkCompaction(_ store: inout FuzzStore, _ keychain: Keychain, credential: Credential) {
        let before = KeychainContents(of: keychain, Version.self)
        do {
            try keychain.compact()
        } catch {
            Invariant.check(false, "compaction failed: \(error)")
            return
        }
        let inMemory = KeychainContents(of: keychain, Version.self)
        Invariant.check(
            Version.compactionKeepsAddedOrder ? inMemory == before : inMemory.itemsByID == before.itemsByID,
            "compaction changed the items in memory")
        do {
            let again = try store.open(with: credential)
            let version = again.withLock { again.log.formatVersion }
            Invariant.check(version == Version.compactedFormatVersion, "compaction wrote format version \(version), not \(Version.compactedFormatVersion)")
            Invariant.check(again.tornTail == nil, "the compacted file has a torn tail: \(again.tornTail!)")
            let after = KeychainContents(of: again, Version.self)
            let same = Version.compactionKeepsAddedOrder ? after == before : after.itemsByID == before.itemsByID
            Invariant.check(same, "the compacted file holds other items")
        } catch {
            Invariant.check(false, "the compacted file does not open: \(error)")
        }
    }

    /// The ranges of bytes that differ between two versions of the file (for tracing), and their sizes.
    static func changedRanges(_ old: [UInt8], _ new: [UInt8]) -> String {
        var ranges: [Range<Int>] = []
        for index in 0..<max(old.count, new.count) where index >= old.count || index >= new.count || old[index] != new[index] {
            if let last = ranges.last, last.upperBound == index { ranges[ranges.count - 1] = last.lowerBound..<(index + 1) } else { ranges.append(index..<(index + 1)) }
        }
        return "\(ranges.prefix(12).map { "\($0.lowerBound)..<\($0.upperBound)" }.joined(separator: ", "))\(ranges.count > 12 ? " …" : ""); size \(old.count) → \(new.count)"
    }
}
