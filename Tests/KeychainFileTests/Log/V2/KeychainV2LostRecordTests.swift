import Foundation
import Testing
@testable import KeychainFile

/// A power loss during an append to a version 2 file can keep the commit slot the append wrote and lose some or
/// all of its records (Docs/FormatVersion2.md §3 rule 2): the file must still open with every earlier commit, and
/// the append's records either repaired from the slot's parity and applied whole, or set aside — never taken for
/// damage to what was acknowledged before. Found by the crash trials (CrashSlotTear.swift).
@Suite("Format version 2 through Keychain: a commit slot whose records were lost")
struct KeychainV2LostRecordTests {
    /// A file of `count` items with secrets of `secretSize` bytes, compacted if `compacted`, then one more item
    /// whose secret is `lastSecretSize` bytes; returns the path, the items before the last add, the file's bytes
    /// before it and after it.
    func fileWithLastAdd(
        _ directory: TemporaryDirectory, count: Int, secretSize: Int, compacted: Bool, lastSecretSize: Int
    ) throws -> (path: String, before: [String: [UInt8]], bytesBefore: [UInt8], bytesAfter: [UInt8]) {
        var options = V2Keychain.options
        options.autoCompaction = .disabled
        let path = directory.file("v2.kcf")
        let keychain = try Keychain.create(at: path, credential: TestKeychain.password, options: options)
        let before = try V2Keychain.fill(keychain, count: count, perBatch: 10, secretSize: secretSize)
        if compacted { try keychain.compact() }
        let bytesBefore = try fileBytes(path)
        try keychain.add(GenericPassword(service: "svc", account: "last", value: [UInt8](repeating: 0x6C, count: lastSecretSize)))
        return (path, before, bytesBefore, try fileBytes(path))
    }

    /// The last add's records are cut off whole (the file is as long as before it) while its slot stays. A small
    /// record is then repaired from the slot's parity (its bytes are erasures) and applied; a record that
    /// crossed into the next chunk took that chunk's parity with it and is set aside — and the records before it,
    /// in the sector the file now ends in, still read: they were taken for unreadable once, and then for damage
    /// to acknowledged records that parity could not repair.
    @Test("The last add's records cut off whole, its slot kept: every earlier item opens, the add is repaired or set aside",
          arguments: [(false, 300), (false, 62_000), (true, 300), (true, 62_000)])
    func recordsCutWhole(compacted: Bool, lastSecretSize: Int) throws {
        let directory = TemporaryDirectory()
        let file = try fileWithLastAdd(directory, count: 40, secretSize: 1_200, compacted: compacted, lastSecretSize: lastSecretSize)
        let crossesChunk = file.bytesAfter.count > HealingLayout.physicalEnd(ofLog: ChunkParity.dataLength)
        #expect(crossesChunk == (lastSecretSize > 10_000))
        let torn = Array(file.bytesAfter[..<file.bytesBefore.count])
        try writeFileBytes(torn, to: file.path)
        let keychain = try V2Keychain.open(file.path)
        if crossesChunk {
            #expect(try liveSecrets(keychain) == file.before)
            #expect(keychain.tornTail?.mayHoldAcknowledgedData == true)
            #expect(throws: KeychainError.self) { try keychain.add(GenericPassword(service: "svc", account: "next", password: "x")) }
            // Rewriting parity in place is a write too (SPEC §25.4): it would compute parity over bytes set aside.
            #expect(throws: KeychainError.self) { _ = try keychain.repairParity() }
            #expect(try fileBytes(file.path) == torn, "nothing set aside is cut or rewritten")
        } else {
            var withLast = file.before
            withLast["last"] = [UInt8](repeating: 0x6C, count: lastSecretSize)
            #expect(try liveSecrets(keychain) == withLast)
            #expect(keychain.tornTail == nil)
        }
    }
}
