import Foundation
import Testing
@testable import KeychainFile

/// A key slot near its grant limit says so (Docs/FormatVersion3.md §2.2): from 8 grants left on (24 of 32, or fewer
/// when its 8,192 bytes fill first), its ``KeySlotInfo`` is ``KeySlotInfo/isNearGrantLimit`` and its description
/// says what to do, until its own credential rewrites the file and so empties it.
@Suite("Format version 3: a key slot near its grant limit says so")
struct KeychainV3GrantLimitWarningTests {
    typealias Reanchoring = KeychainV3ReanchoringTests

    /// The scoped slot's info, as the full holder lists it.
    static func scopedSlot(_ keychain: Keychain) throws -> KeySlotInfo {
        let slots = try keychain.keySlots()
        try #require(slots.count == 2)
        return slots[1]
    }

    @Test("Each group the full holder adds grants to the scoped slot: 23 grants pass quietly, the 24th warns, the holder's compaction empties it")
    func warnsFrom24Grants() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let full = try Reanchoring.fullWithScopedCredential(in: directory)
        for number in 0..<23 { try Reanchoring.addGroup(full, number) }
        let quiet = try Self.scopedSlot(full)
        #expect(quiet.grants == 23)
        #expect(quiet.grantsLeft == 9)
        #expect(!quiet.isNearGrantLimit && quiet.grantWarning == nil)
        #expect(!quiet.description.contains("grants"))
        #expect(try full.keySlots()[0].grants == 0)

        try Reanchoring.addGroup(full, 23)
        let near = try Self.scopedSlot(full)
        #expect(near.grants == 24)
        #expect(near.isNearGrantLimit)
        #expect(near.description.contains("24 grants, room for 8 more: compact the keychain with this slot's own credential soon"))
        // What the file's header holds, read by another holder.
        #expect(try V3Keychain.open(path).keySlots().map(\.grants) == [0, 24])

        let scoped = try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA)
        #expect(try Self.scopedSlot(scoped).isNearGrantLimit)
        try scoped.compact()
        #expect(try Self.scopedSlot(scoped).grants == 0)
        try full.refresh()
        #expect(try !Self.scopedSlot(full).isNearGrantLimit)
    }

    @Test("A slot scoped to groups with long names fills its bytes before 24 grants: it warns 8 grants before the refusal, which comes when it says none are left")
    func bytesFillFirst() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let full = try V3Keychain.create(in: directory)
        let wide = (0..<3).map { "com.example.\(String(repeating: "w", count: 28))\($0)" }
        for group in wide { try full.add(GenericPassword(service: "svc", account: group, password: "p", accessGroup: group)) }
        try full.addCredential(KeychainV3ScopedWriteTests.scopedA, scope: .groups(wide), keyDerivation: KeychainV3ReanchoringTests.cheap)
        var left: [Int] = [try Self.scopedSlot(full).grantsLeft]
        var refusal: KeychainError?
        for number in 0..<40 {
            do {
                try Reanchoring.addGroup(full, number)
            } catch {
                refusal = error
                break
            }
            left.append(try Self.scopedSlot(full).grantsLeft)
        }
        let slot = try Self.scopedSlot(full)
        // Refused when the slot said no grant was left, having counted down one a group, and before 24 grants.
        guard case .limitReached = try #require(refusal) else {
            Issue.record("refused with \(String(describing: refusal)), not limitReached")
            return
        }
        #expect(slot.grantsLeft == 0 && slot.grants < 24, "\(slot.grants) grants, \(slot.grantsLeft) left")
        #expect(left == Array((0...left[0]).reversed()))
        #expect(slot.isNearGrantLimit && slot.grantWarning != nil)
        // Nothing was written by the refused addition: every holder still opens the file.
        #expect(try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA).count == 3)
    }

    @Test("Slots of format versions 1 and 2 hold no grants", arguments: [1, 2])
    func noGrantsBeforeVersion3(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: formatVersion)
        try keychain.addCredential(.password("second"), iterations: .insecureForTesting(1_000))
        #expect(try keychain.keySlots().map(\.grants) == [0, 0])
        #expect(try keychain.keySlots().allSatisfy { !$0.isNearGrantLimit })
    }
}
