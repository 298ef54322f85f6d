import Foundation
import Testing
@testable import KeychainFile

/// A batch that adds an item and then updates it writes two puts of it in one record (SPEC.md §37.6 rule 6). When only
/// the first put's secret box is lost, the version lost was not the item's last: the item is served at the later
/// version, not taken out as if its latest version were lost.
@Suite("Format version 3: a lost secret box of a version a later entry supersedes")
struct KeychainV3SupersededSecretTests {
    static let groupA = KeychainV3GroupTests.groupA
    static let groupB = KeychainV3GroupTests.groupB

    /// x added with a 12,000-byte secret and updated to "x-value-2" in one batch, with `between` items of group B added
    /// between the two (so that, with 150 of them, the update lands on a later page of the record); the first put's
    /// box destroyed past what parity repairs. The recovering keychain, x's id and whether the two puts share a page.
    static func addThenUpdate(between: Int) throws -> (Keychain, ItemID, samePage: Bool, TemporaryDirectory) {
        let directory = TemporaryDirectory()
        let keychain = try V3Keychain.create(in: directory)
        let path = directory.file("v3.kcf")
        try keychain.add(GenericPassword(service: "svc", account: "a", accessGroup: Self.groupA, value: Array("a-value".utf8)))
        try keychain.add(GenericPassword(service: "svc", account: "z", accessGroup: Self.groupB, value: Array("z-value".utf8)))
        try keychain.batch { (batch) throws(KeychainError) in
            try batch.add(GenericPassword(service: "svc", account: "x", accessGroup: Self.groupB, value: [UInt8](repeating: 1, count: 12_000)))
            for number in 0..<between {
                try batch.add(GenericPassword(
                    service: "svc", account: "bulk-\(number)-" + String(repeating: "b", count: 60), accessGroup: Self.groupB, value: Array("bulk".utf8)))
            }
            try batch.update(.genericPassword(service: "svc", account: "x"), setting: [:], secret: Array("x-value-2".utf8))
        }
        let x = try KeychainV3HeldOrderTests.id(keychain, "x")
        let map = try V3LogMap(keychain)
        let pagesOfX = map.pages.filter { $0.puts.contains { $0.id == x } }
        let puts = pagesOfX.flatMap { $0.puts.filter { $0.id == x } }
        try #require(puts.count == 2 && Set(pagesOfX.map(\.record)).count == 1, "two puts of x in one record")
        // The whole box but its nonce and tag: more than parity rebuilds even where it knows which bytes are bad.
        try map.destroy((puts[0].box.lowerBound + 12)..<(puts[0].box.upperBound - 16), at: path)
        let recovered = try KeychainV3RecoveryTests.openRecovering(path)
        return (recovered, x, pagesOfX.count == 1, directory)
    }

    @Test("Both puts in one page: x is served at its later version, and the lost box is listed, not as a lost item")
    func samePage() throws {
        let (recovered, x, samePage, directory) = try Self.addThenUpdate(between: 0)
        try #require(samePage)
        let damage = recovered.recovery?.damage ?? []
        #expect(!damage.contains { $0.itemID == x && $0.loss == .item }, "x's latest version is reported lost: \(damage)")
        #expect(damage.contains { $0.itemID == x }, "the lost box is listed: \(damage)")
        let served = try liveSecrets(recovered)
        #expect(served["x"] == Array("x-value-2".utf8) && served["a"] == Array("a-value".utf8) && served["z"] == Array("z-value".utf8))
        withExtendedLifetime(directory) {}
    }

    @Test("The update on a later page of the record: x is served at its later version")
    func laterPage() throws {
        let (recovered, x, samePage, directory) = try Self.addThenUpdate(between: 150)
        try #require(!samePage)
        let damage = recovered.recovery?.damage ?? []
        #expect(damage.contains { $0.itemID == x }, "the lost box is listed: \(damage)")
        let served = try liveSecrets(recovered)
        #expect(served["x"] == Array("x-value-2".utf8), "x is taken out though its later version reads")
        #expect(served.count == 153, "\(served.count) items served")
        withExtendedLifetime(directory) {}
    }
}
