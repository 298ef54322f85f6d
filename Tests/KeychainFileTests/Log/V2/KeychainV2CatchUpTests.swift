import Foundation
import Testing
@_spi(FormatVersion2) @testable import KeychainFile

/// Catching up with another writer's commits to a version 2 file reads the log from where this keychain's
/// replay ended; what it finds there must be reported as a fresh open reports it — offsets in the log, not in
/// the window the replay happened to read. Found by the open-v2 fuzz target.
@Suite("Format version 2 through Keychain: catching up")
struct KeychainV2CatchUpTests {
    @Test("Records another writer committed that do not verify are set aside with the same report as a fresh open gives")
    func damagedCommitCaughtUp() throws {
        let directory = try TemporaryDirectory()
        let writer = try V2Keychain.create(in: directory)
        try writer.add(GenericPassword(service: "svc", account: "first", value: [UInt8](repeating: 1, count: 200)))
        let path = directory.file("v2.kcf")
        let reader = try V2Keychain.open(path)
        let end = try V2Keychain.log(reader).end
        try writer.add(GenericPassword(service: "svc", account: "second", value: [UInt8](repeating: 2, count: 200)))
        let slot = try #require(try V2Keychain.log(writer).state.log.newest)
        // The second record damaged, and the parity in its commit slot too: nothing repairs it.
        var damaged = try fileBytes(path)
        for offset in (end + 100)..<(end + 140) { damaged[HealingLayout.physical(offset)] ^= 0xFF }
        let parity = HealingLayout.slotOffsets[Int(slot.seal.counter % 2)] + Seal.encodedLength
        for offset in parity..<(parity + ChunkParity.parityLength) { damaged[offset] ^= 0xA5 }
        try writeFileBytes(damaged, to: path)

        let opened = try V2Keychain.open(path)
        let expected = try #require(opened.tornTail)
        #expect(expected.mayHoldAcknowledgedData)
        try reader.refresh()
        #expect(reader.tornTail == expected)
        #expect(reader.head == opened.head)
    }
}
