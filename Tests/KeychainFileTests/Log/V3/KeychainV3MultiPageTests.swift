import Foundation
import Testing
@testable import KeychainFile
import KeychainCrypto

/// Version 3 files whose header runs take several pages (Docs/FormatVersion3.md §2.9): the commit slots, run B and
/// the log move with the runs' length, and everything version 2's log does still works there.
@Suite("Format version 3: header runs of several pages")
struct KeychainV3MultiPageTests {
    /// A version 3 keychain with enough raw-key credentials that its header takes more than one page, and those keys.
    static func manySlots(in directory: TemporaryDirectory, keys count: Int = 10) throws -> (Keychain, [SymmetricKey]) {
        let keychain = try V3Keychain.create(in: directory)
        var keys: [SymmetricKey] = []
        for _ in 0..<count {
            let key = SymmetricKey(size: .bits256)
            try keychain.addCredential(.key(key), keyDerivation: KeychainV3CredentialTests.cheap)
            keys.append(key)
        }
        return (keychain, keys)
    }

    @Test("A header of two pages moves the commit slots, run B and the log; items, catch-up and compaction work there")
    func twoPages() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let (keychain, keys) = try Self.manySlots(in: directory)
        let log = try V3Keychain.log(keychain)
        #expect(log.state.pageCount == 2)
        var expected = try V2Keychain.fill(keychain, count: 30, perBatch: 4)
        let bytes = try fileBytes(path)
        // Run B is run A's bytes, 4,096·2 + 24,576 bytes in; the log's first record starts at 8,192·2 + 24,576.
        #expect(Array(bytes[0..<8_192]) == Array(bytes[32_768..<40_960]))
        #expect(try RecordV3Decoder.scan(bytes, at: 40_960).sequence == 1)
        let other = try V3Keychain.open(path, credential: .key(keys[3]))
        #expect(try liveSecrets(other) == expected)
        try other.add(GenericPassword(service: "svc", account: "other", password: "o"))
        expected["other"] = Array("o".utf8)
        try keychain.refresh()
        #expect(try liveSecrets(keychain) == expected)
        try keychain.compact()
        try other.refresh()
        #expect(try liveSecrets(other) == expected)
        #expect(try V3Keychain.log(other).state.pageCount == 2)
        #expect(try liveSecrets(V3Keychain.open(path, credential: .key(keys[9]))) == expected)
    }

    @Test("A flipped bit in run A's second page, or in the log behind two-page runs, is repaired and written back")
    func damageBehindTwoPages() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let (keychain, _) = try Self.manySlots(in: directory)
        let expected = try V2Keychain.fill(keychain, count: 10, perBatch: 10)
        try keychain.compact()
        let pristine = try fileBytes(path)
        for offset in [4_096 + 300, 40_960 + 100] {
            var damaged = pristine
            damaged[offset] ^= 0x04
            try writeFileBytes(damaged, to: path)
            let reopened = try V3Keychain.open(path)
            #expect(try liveSecrets(reopened) == expected, "byte \(offset)")
            #expect(!reopened.repairs.isEmpty, "byte \(offset)")
            try reopened.add(GenericPassword(service: "other", account: "x", password: "y"))
            let after = try fileBytes(path)
            #expect(after[offset] == pristine[offset], "byte \(offset) written back")
            try writeFileBytes(pristine, to: path)
        }
    }
}
