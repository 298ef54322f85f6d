import Foundation
import Testing
@testable import KeychainFile

/// A record that verifies only as repaired, in a chunk whose repair cannot be confirmed whole: parity may also
/// change bytes no record verifies (an undone transaction's), or leave a codeword unrepaired. The writer must
/// still write back the repaired bytes of the records that verified before it computes the chunk's parity from
/// the bytes below the log's end — else that parity describes the damage, the damage becomes permanent, and the
/// acknowledged record is lost on the next open. Found by the open-v2 fuzz target.
@Suite("Format version 2 through Keychain: repairs confirmed in part")
struct KeychainV2PartialRepairTests {
    @Test("A damaged committed record before a damaged undone transaction part is written back before the part is cut")
    func repairedRecordBeforeUndoneTransaction() throws {
        let directory = TemporaryDirectory()
        let keychain = try V2Keychain.create(in: directory)
        let secret = [UInt8](repeating: 0x41, count: 100)
        try keychain.add(GenericPassword(service: "svc", account: "a", value: secret))
        // A transaction part that never got its commit (a crash during a large batch), written as the writer would.
        let log = try V2Keychain.log(keychain)
        let committedEnd = log.end
        let head = log.head
        var random = SystemRandomNumberGenerator()
        let part = try RecordV2Encoder.encode(
            [.delete(id: ItemID(high: 1, low: 2), time: 0)], kind: .part, sequence: head.sequence + 1, part: 0,
            previousChain: head.chainValue, keys: log.state.keys, using: &random)
        try log.state.log.append(
            part.bytes, committedEnd: committedEnd, headSequence: head.sequence, headChain: head.chainValue, flushBetween: true)
        // One byte of the committed record's last page and one of the part, in different codewords of chunk 0:
        // parity repairs both, but only the first lies in a record that verifies.
        let path = directory.file("v2.kcf")
        var damaged = try fileBytes(path)
        damaged[HealingLayout.physical(committedEnd - 20)] ^= 0x01
        damaged[HealingLayout.physical(committedEnd + 50)] ^= 0x01
        try writeFileBytes(damaged, to: path)

        let opened = try V2Keychain.open(path)
        #expect(try liveSecrets(opened) == ["a": secret])
        #expect(opened.tornTail != nil, "the part is an undone transaction")
        try opened.add(GenericPassword(service: "svc", account: "b", password: "b"))
        let reopened = try V2Keychain.open(path)
        #expect(try liveSecrets(reopened) == ["a": secret, "b": Array("b".utf8)])
        #expect(try fileBytes(path)[HealingLayout.physical(committedEnd - 20)] != damaged[HealingLayout.physical(committedEnd - 20)], "written back")
    }

    @Test("A damaged record in the last chunk, whose slot parity has a codeword beyond repair, is written back before that parity is recomputed")
    func repairedRecordWithUnrepairedCodeword() throws {
        let directory = TemporaryDirectory()
        let keychain = try V2Keychain.create(in: directory)
        let secret = [UInt8](repeating: 0x42, count: 300)
        try keychain.add(GenericPassword(service: "svc", account: "a", value: secret))
        let slot = try V2Keychain.log(keychain).state.log.newest
        let place = Int(try #require(slot).seal.counter % 2)
        let path = directory.file("v2.kcf")
        var damaged = try fileBytes(path)
        // Log byte 10 (codeword 10), and 17 of the slot's parity symbols of codeword 200: more than it corrects.
        damaged[HealingLayout.physical(10)] ^= 0x01
        for symbol in 0..<17 { damaged[HealingLayout.slotOffsets[place] + Seal.encodedLength + symbol * ChunkParity.depth + 200] ^= 0x5A }
        try writeFileBytes(damaged, to: path)

        let opened = try V2Keychain.open(path)
        #expect(try liveSecrets(opened) == ["a": secret])
        try opened.add(GenericPassword(service: "svc", account: "b", password: "b"))
        let reopened = try V2Keychain.open(path)
        #expect(try liveSecrets(reopened) == ["a": secret, "b": Array("b".utf8)])
    }
}
