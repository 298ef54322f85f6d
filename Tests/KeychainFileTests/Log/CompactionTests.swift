import Foundation
import Testing
@testable import KeychainFile

/// The live items of a keychain, as (account → secret), found through the public API.
func liveSecrets(_ keychain: Keychain, service: String = "svc") throws -> [String: [UInt8]] {
    var secrets: [String: [UInt8]] = [:]
    do {
        for item in try keychain.find(GenericPassword.self, matching: .genericPassword(service: service)) {
            secrets[item.account] = item.value
        }
    } catch .itemNotFound {
        return [:]
    }
    return secrets
}

/// Every 16-byte window of `bytes`, to ask whether any part of a sealed box survives in a file.
func windows16(_ bytes: [UInt8]) -> Set<[UInt8]> {
    var set = Set<[UInt8]>()
    guard bytes.count >= 16 else { return set }
    for start in 0...(bytes.count - 16) { set.insert(Array(bytes[start..<(start + 16)])) }
    return set
}

/// Format version 1, whatever the default: the tests check version 1's compaction, epochs and dead bytes (SPEC.md §15.1).
@Suite("Compaction (SPEC.md §15.1)")
struct CompactionTests {
    /// A keychain with 40 items of which 15 were overwritten and 10 deleted; returns the keychain, the
    /// secrets expected, and the sealed secret boxes of the dead versions.
    func churned(_ directory: TemporaryDirectory, options: Keychain.CreationOptions = TestKeychain.versionOneOptions) throws
        -> (Keychain, [String: [UInt8]], [[UInt8]])
    {
        let keychain = try Keychain.create(at: directory.file("test.kcf"), credential: TestKeychain.password, options: options)
        var expected: [String: [UInt8]] = [:]
        var deadBoxes: [[UInt8]] = []
        for index in 0..<40 {
            let secret = Array("secret number \(index)".utf8)
            try keychain.add(GenericPassword(service: "svc", account: "user\(index)", value: secret))
            expected["user\(index)"] = secret
        }
        func box(_ account: String) throws -> [UInt8] {
            let reference = try #require(try keychain.search(.genericPassword(service: "svc", account: account),
                                                             returning: .persistentReference)[0].persistentReference)
            return Array(try #require(keychain.index[reference.itemID]).secret.box)
        }
        for index in 0..<15 {
            deadBoxes.append(try box("user\(index)"))
            let secret = Array("replacement \(index)".utf8)
            try keychain.update(.genericPassword(service: "svc", account: "user\(index)"), setting: [:], secret: secret)
            expected["user\(index)"] = secret
        }
        for index in 30..<40 {
            deadBoxes.append(try box("user\(index)"))
            try keychain.delete(.genericPassword(service: "svc", account: "user\(index)"))
            expected.removeValue(forKey: "user\(index)")
        }
        return (keychain, expected, deadBoxes)
    }

    @Test("Compaction keeps every live item, drops the dead ones' sealed bytes, and moves to a new epoch")
    func compactsAndForgets() throws {
        let directory = TemporaryDirectory()
        let (keychain, expected, deadBoxes) = try churned(directory)
        let path = directory.file("test.kcf")
        let oldBytes = try fileBytes(path)
        let oldWindows = windows16(oldBytes)
        // The dead boxes are in the old file: the check below can fail.
        for box in deadBoxes { #expect(oldWindows.contains(Array(box.suffix(16)))) }
        let references = try keychain.search(.genericPassword(service: "svc"), returning: [.persistentReference, .attributes])

        let result = try keychain.compact()
        #expect(result.before.epoch == 1 && result.after.epoch == 2)
        #expect(result.after.itemCount == 30 && result.before.itemCount == 30)
        #expect(result.after.fileSize < result.before.fileSize)
        #expect(result.after.fileSize == (try fileBytes(path)).count)
        #expect(result.after.deadShare < 0.01, "only transaction framing is dead after compaction: \(result.after)")
        #expect(keychain.head.epoch == 2)

        let newBytes = try fileBytes(path)
        let newWindows = windows16(newBytes)
        for box in deadBoxes {
            // Nonce, the start of the ciphertext, and the tag of every dead secret box: none survives.
            #expect(!newWindows.contains(Array(box.prefix(16))))
            #expect(!newWindows.contains(Array(box.suffix(16))))
        }
        // The live secrets were sealed anew too: no 16-byte window of the old file's records is in the new one.
        let firstRecord = try #require(recordOffsets(of: oldBytes).first).lowerBound
        let oldRecords = Array(oldBytes[firstRecord...])
        #expect(windows16(oldRecords).intersection(newWindows).isEmpty)

        #expect(try liveSecrets(keychain) == expected)
        let reopened = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(try liveSecrets(reopened) == expected)
        #expect(reopened.head == keychain.head)
        // Persistent references and attributes (dates included) survive compaction.
        for result in references {
            let reference = try #require(result.persistentReference)
            let again = try reopened.search(Query(.genericPassword, persistentReference: reference), returning: .attributes)
            #expect(again[0].attributes == result.attributes)
        }
        // And the keychain goes on: a write after compaction lands in the new epoch.
        try keychain.add(GenericPassword(service: "svc", account: "late", password: "late"))
        #expect(keychain.head == Head(epoch: 2, sequence: keychain.head.sequence, chainValue: keychain.head.chainValue))
        #expect(try Keychain.open(at: path, credential: TestKeychain.password).count == 31)
    }

    @Test("Statistics count live and dead bytes as SPEC.md §15.1 defines them, and match the file")
    func statistics() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        let empty = try keychain.statistics()
        #expect(empty.itemCount == 0 && empty.deadBytes == 0 && empty.liveBytes == empty.fileSize)
        #expect(empty.fileSize == (try fileBytes(path)).count)

        try keychain.add(GenericPassword(service: "svc", account: "a", password: "one"))
        let one = try keychain.statistics()
        #expect(one.deadBytes == 0 && one.liveBytes == one.fileSize && one.itemCount == 1)

        try keychain.update(.genericPassword(service: "svc", account: "a"), setting: [:], secret: Array("two".utf8))
        let updated = try keychain.statistics()
        let recordSize = one.fileSize - empty.fileSize
        #expect(updated.deadBytes == recordSize, "the first put is dead")
        #expect(updated.fileSize == (try fileBytes(path)).count)

        try keychain.delete(.genericPassword(service: "svc", account: "a"))
        let deleted = try keychain.statistics()
        #expect(deleted.itemCount == 0 && deleted.liveBytes == empty.fileSize)
        #expect(deleted.deadBytes == deleted.fileSize - empty.fileSize)
        // Statistics after reopening are the same: they come from the file, not from this session.
        #expect(try Keychain.open(at: path, credential: TestKeychain.password).statistics() == deleted)
    }

    @Test("Commits compact on their own once dead bytes pass the threshold, and not when disabled")
    func automatic() throws {
        let directory = TemporaryDirectory()
        var options = TestKeychain.versionOneOptions
        options.autoCompaction = AutoCompaction(deadShare: 0.5, minimumFileSize: 4_096)
        let keychain = try Keychain.create(at: directory.file("auto.kcf"), credential: TestKeychain.password, options: options)
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "v0"))
        var largest = 0
        for round in 1...200 {
            try keychain.update(.genericPassword(service: "svc", account: "a"), setting: [:], secret: Array("v\(round)".utf8))
            largest = max(largest, try keychain.statistics().fileSize)
        }
        #expect(keychain.head.epoch > 5, "compacted several times: epoch \(keychain.head.epoch)")
        #expect(largest < 4_096 * 3, "the file never grew far past the threshold: \(largest)")
        #expect(try liveSecrets(keychain) == ["a": Array("v200".utf8)])
        #expect(try liveSecrets(try Keychain.open(at: directory.file("auto.kcf"), credential: TestKeychain.password)) == ["a": Array("v200".utf8)])

        options.autoCompaction = .disabled
        let manual = try Keychain.create(at: directory.file("manual.kcf"), credential: TestKeychain.password, options: options)
        try manual.add(GenericPassword(service: "svc", account: "a", password: "v0"))
        for round in 1...200 {
            try manual.update(.genericPassword(service: "svc", account: "a"), setting: [:], secret: Array("v\(round)".utf8))
        }
        #expect(manual.head.epoch == 1)
        #expect(try manual.statistics().deadShare > 0.9)
    }

    @Test("An automatic compaction that cannot write its new file is tried again after 1, 3, 7, … commits, not at every one; the commits succeed, the failure is kept for the caller, and a compaction that succeeds starts afresh")
    func failedAutomaticCompactionBacksOff() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("auto.kcf")
        let fileSystem = FaultyFileSystem()
        var options = V2Keychain.options
        options.autoCompaction = AutoCompaction(deadShare: 0, minimumFileSize: 0)
        let keychain = try Keychain.createForTesting(at: path, fileSystem: fileSystem, options: options)
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "v0"))
        #expect(keychain.lastAutoCompactionFailure == nil)

        // The new file cannot be made (as in a directory that became read-only): every update commits, and makes
        // the file due for compaction, which fails.
        let epochBefore = keychain.head.epoch
        fileSystem.failAlways(.createExclusive)
        fileSystem.resetCounts()
        for round in 1...80 {
            try keychain.update(.genericPassword(service: "svc", account: "a"), setting: [:], secret: Array("v\(round)".utf8))
        }
        #expect(fileSystem.calls(of: .createExclusive) == 6, "tried at commits 1, 3, 7, 15, 31 and 63 of 80")
        #expect(keychain.lastAutoCompactionFailure != nil)
        #expect(keychain.head.epoch == epochBefore, "nothing rewritten")
        #expect(try liveSecrets(Keychain.open(at: path, credential: TestKeychain.password)) == ["a": Array("v80".utf8)])

        // Once the directory is writable again, a compaction asked for succeeds at once, and the next commit due
        // tries again.
        fileSystem.heal()
        try keychain.compact()
        #expect(keychain.lastAutoCompactionFailure == nil)
        let epoch = keychain.head.epoch
        try keychain.update(.genericPassword(service: "svc", account: "a"), setting: [:], secret: Array("v81".utf8))
        #expect(keychain.head.epoch == epoch + 1, "compacted automatically at the first commit after")
    }

    @Test("Stray temporary files of this keychain are removed; other files are not")
    func strayFiles() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "one"))
        let stray = directory.file("test.kcf.tmp-0123456789ab")
        let unrelated = directory.file("other.kcf.tmp-0123456789ab")
        try writeFileBytes([1, 2, 3], to: stray)
        try writeFileBytes([1, 2, 3], to: unrelated)
        _ = try Keychain.open(at: directory.file("test.kcf"), credential: TestKeychain.password)
        #expect(!FileManager.default.fileExists(atPath: stray), "opening removes a stray temporary file")
        try writeFileBytes([1, 2, 3], to: stray)
        try keychain.compact()
        #expect(!FileManager.default.fileExists(atPath: stray), "compaction removes a stray temporary file")
        #expect(FileManager.default.fileExists(atPath: unrelated))
    }

    @Test("A compaction that fails at any step leaves the old file whole, or the new one; the keychain goes on",
          arguments: [FaultyFileSystem.Operation.createExclusive, .write, .sync, .rename, .syncDirectory])
    func failures(at operation: FaultyFileSystem.Operation) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let fileSystem = FaultyFileSystem()
        let keychain = try Keychain.createForTesting(at: path, fileSystem: fileSystem, options: TestKeychain.versionOneOptions)
        var expected: [String: [UInt8]] = [:]
        for index in 0..<20 {
            try keychain.add(GenericPassword(service: "svc", account: "user\(index)", password: "pw\(index)"))
            expected["user\(index)"] = Array("pw\(index)".utf8)
        }
        try keychain.delete(.genericPassword(service: "svc", account: "user0"))
        expected.removeValue(forKey: "user0")
        let before = try fileBytes(path)

        fileSystem.fail(operation)
        #expect(throws: KeychainError.self) { try keychain.compact() }
        #expect(fileSystem.fired)
        fileSystem.heal()

        // On disk: the old file, byte for byte, if the failure came before the rename; otherwise the new one.
        let after = try fileBytes(path)
        if operation == .syncDirectory {
            #expect(after != before)
            #expect(keychain.head.epoch == 2)
        } else {
            #expect(after == before)
            #expect(keychain.head.epoch == 1)
        }
        #expect(try liveSecrets(try Keychain.open(at: path, credential: TestKeychain.password)) == expected)
        // No temporary file is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["test.kcf", "test.kcf.lock"])
        // The keychain object still matches the file and still writes.
        #expect(try liveSecrets(keychain) == expected)
        try keychain.add(GenericPassword(service: "svc", account: "after", password: "after"))
        expected["after"] = Array("after".utf8)
        try keychain.compact()
        #expect(try liveSecrets(try Keychain.open(at: path, credential: TestKeychain.password)) == expected)
    }

    /// A keychain on `fileSystem` at `path` holding "user1" … "user299" (passwords "pw1" … "pw299") and the
    /// dead bytes of "user0", deleted, so that a compaction has something to drop; and its live secrets.
    private static func keychainForReadBack(at path: String, fileSystem: FaultyFileSystem) throws -> (Keychain, [String: [UInt8]]) {
        let keychain = try Keychain.createForTesting(at: path, fileSystem: fileSystem, options: TestKeychain.versionOneOptions)
        var expected: [String: [UInt8]] = [:]
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<300 {
                try batch.add(GenericPassword(service: "svc", account: "user\(index)", password: "pw\(index)"))
                expected["user\(index)"] = Array("pw\(index)".utf8)
            }
        }
        try keychain.delete(.genericPassword(service: "svc", account: "user0"))
        expected.removeValue(forKey: "user0")
        return (keychain, expected)
    }

    @Test("A compaction reads the new secret boxes back from the new file; if that read fails, the next call reloads the file")
    func readBackFails() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let fileSystem = FaultyFileSystem()
        let (keychain, initial) = try Self.keychainForReadBack(at: path, fileSystem: fileSystem)
        var expected = initial

        // Compaction reads nothing but the new boxes back (the old secrets are in memory), after catching up, which
        // reads the header's first sector (HeaderFingerprint); so the second read fails after the new file is in
        // place: the compaction itself succeeded.
        fileSystem.fail(.read, call: 2)
        try keychain.compact()
        #expect(fileSystem.fired)
        fileSystem.heal()
        #expect(keychain.head.epoch == 2)
        #expect(try keychain.log.hasChanged())
        #expect(try liveSecrets(keychain) == expected)
        #expect(try liveSecrets(try Keychain.open(at: path, credential: TestKeychain.password)) == expected)
        try keychain.add(GenericPassword(service: "svc", account: "after", password: "after"))
        expected["after"] = Array("after".utf8)
        #expect(try liveSecrets(keychain) == expected)

        // And when the read back works, the boxes verify and the items hold them at once: nothing to reload.
        try keychain.compact()
        #expect(keychain.head.epoch == 3)
        #expect(try !keychain.log.hasChanged())
        #expect(try liveSecrets(keychain) == expected)
    }

    @Test("A compaction verifies the secret boxes it reads back: one that reads back altered makes the next call reload the file")
    func readBackAltered() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let fileSystem = FaultyFileSystem()
        let (keychain, expected) = try Self.keychainForReadBack(at: path, fileSystem: fileSystem)

        // The read back gets the last ciphertext byte of the last secret box flipped (its tag is the last 16
        // bytes). Held without being verified, that box would decrypt to a wrong password on every later read,
        // since a secret in memory is decrypted without its tag being checked again.
        fileSystem.inject(.flippedBit(fromEnd: 17), at: .read, call: 2)   // the first read is catching up's
        try keychain.compact()
        #expect(fileSystem.fired)
        fileSystem.heal()
        #expect(keychain.head.epoch == 2)
        #expect(try keychain.log.hasChanged())
        #expect(try keychain.data(forService: "svc", account: "user299") == Array("pw299".utf8))
        #expect(try liveSecrets(keychain) == expected)
        #expect(try liveSecrets(try Keychain.open(at: path, credential: TestKeychain.password)) == expected)
    }

    @Test("Large secrets are compacted in several windows and read back whole")
    func largeSecretsReadBack() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        var expected: [String: [UInt8]] = [:]
        for index in 0..<12 {
            let secret = (0..<(100_000 + index)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }
            try keychain.add(GenericPassword(service: "svc", account: "big\(index)", value: secret))
            expected["big\(index)"] = secret
        }
        // A rewrite seals its secret boxes into the window's buffer, so 100 KB secrets end windows early.
        let entries: [LogEntry] = try (0..<12).map { (index) throws(KeychainError) -> LogEntry in
            .put(id: try ItemID(bytes: [UInt8](repeating: UInt8(index), count: 16)), attributes: try ItemAttributes(
                itemClass: .genericPassword, values: [.creationDate: .date(Date()), .modificationDate: .date(Date())]),
                 secret: .bytes([UInt8](repeating: 1, count: 100_000)))
        }
        #expect(RecordSealer.windowEnd(of: entries, from: 0, countingSecrets: true) < RecordSealer.windowEnd(of: entries, from: 0))
        try keychain.compact()
        #expect(try liveSecrets(keychain) == expected)
        #expect(try liveSecrets(try Keychain.open(at: keychain.path, credential: TestKeychain.password)) == expected)
    }

    @Test("Two keychain objects on one file see each other's writes and compactions on their next call")
    func twoObjects() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let first = try TestKeychain.create(in: directory, formatVersion: 1)
        let second = try Keychain.open(at: path, credential: TestKeychain.password)
        try first.add(GenericPassword(service: "svc", account: "a", password: "from first"))
        #expect(try liveSecrets(second) == ["a": Array("from first".utf8)])
        try second.add(GenericPassword(service: "svc", account: "b", password: "from second"))
        #expect(throws: KeychainError.duplicateItem) {
            try first.add(GenericPassword(service: "svc", account: "b", password: "duplicate"))
        }
        try second.compact()
        #expect(try liveSecrets(first) == ["a": Array("from first".utf8), "b": Array("from second".utf8)])
        #expect(first.head == second.head && first.head.epoch == 2)
        try first.update(.genericPassword(service: "svc", account: "a"), setting: [:], secret: Array("changed".utf8))
        try first.compact()
        try second.delete(.genericPassword(service: "svc", account: "b"))
        #expect(try liveSecrets(first) == ["a": Array("changed".utf8)])
        #expect(try liveSecrets(try Keychain.open(at: path, credential: TestKeychain.password)) == ["a": Array("changed".utf8)])
    }
}
