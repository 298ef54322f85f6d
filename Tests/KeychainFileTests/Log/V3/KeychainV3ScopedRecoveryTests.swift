import Foundation
import Testing
@testable import KeychainFile

/// A scoped holder's recovering read checks the other groups' heads against their segments, as its plain open does
/// (SPEC.md §37.4, §37.6 rule 1): a file that a plain open refuses is never served as undamaged, and damage that
/// makes the count unknown does not make honest heads after it look forged.
@Suite("Format version 3: a scoped holder's recovering read checks other groups' heads")
struct KeychainV3ScopedRecoveryTests {
    static let groupA = KeychainV3GroupTests.groupA
    static let groupB = KeychainV3GroupTests.groupB
    static let scopedA = KeychainV3ScopedWriteTests.scopedA

    /// Every credential of every `Fixtures/v3` manifest, with what a plain open must give it.
    static var cases: [String] {
        ConformanceTests.manifestNames("v3").flatMap { name -> [String] in
            guard let manifest = try? manifest(name) else { return [] }
            let count = 1 + ((manifest["otherCredentials"] as? [Any])?.count ?? 0)
            return (0..<count).map { "\(name)#\($0)" }
        }
    }

    /// A copy of the fixture `v3/<name>.kcf` in `directory` (opening makes a lock file, which does not belong in Fixtures/).
    static func copy(_ name: String, into directory: TemporaryDirectory) throws -> String {
        let path = directory.file("fixture.kcf")
        try FileManager.default.copyItem(atPath: ConformanceTests.fixtures.appendingPathComponent("v3/\(name).kcf").path, toPath: path)
        return path
    }

    static func manifest(_ name: String) throws -> [String: Any] {
        let url = ConformanceTests.fixtures.appendingPathComponent("v3/\(name).json")
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    @Test("A file a plain open refuses as corrupted is, read with recovery, refused or served with its damage listed — for every credential of every version 3 fixture", arguments: cases)
    func refusalIsNeverACleanRecovery(_ fixtureCase: String) throws {
        let parts = fixtureCase.split(separator: "#")
        let name = String(parts[0])
        let index = try #require(Int(parts[1]))
        let manifest = try Self.manifest(name)
        let entry = index == 0 ? manifest : try #require((manifest["otherCredentials"] as? [[String: Any]])?[index - 1])
        let expect = try #require(entry["expect"] as? [String: Any])
        guard expect["outcome"] as? String == "fails", expect["error"] as? String == "corrupted" else { return }
        let credentialObject = try #require(entry["credential"] as? [String: Any])
        let credential = try ConformanceTests.credential(credentialObject)
        let directory = TemporaryDirectory()
        let path = try Self.copy(name, into: directory)
        let recovered: Keychain
        do {
            recovered = try Keychain.open(at: path, credential: credential, options: .init(recover: true))
        } catch {
            return
        }
        let listed = recovered.recovery?.damage ?? []
        #expect(listed.count > 0, "\(fixtureCase): a plain open refuses it, and a recovering read lists nothing")
    }

    @Test("A page of another group dropped, its head left naming it: the holder of A, which cannot read that group, serves its own items and lists each commit whose heads disagree with that group's segments")
    func droppedPageOfAnotherGroupListed() throws {
        let name = "reference-forged-dropped-page"
        let manifest = try Self.manifest(name)
        let others = try #require(manifest["otherCredentials"] as? [[String: Any]])
        let mailHolder = Credential.password("the mail holder's password")
        try #require(others.contains { ($0["credential"] as? [String: Any])?["password"] as? String == "the mail holder's password" })
        let directory = TemporaryDirectory()
        let path = try Self.copy(name, into: directory)
        #expect(throws: KeychainError.self) { _ = try Keychain.open(at: path, credential: mailHolder) }
        let recovered = try Keychain.open(at: path, credential: mailHolder, options: .init(recover: true))
        let damage = recovered.recovery?.damage ?? []
        // The forged commit, and the honest one after it, which carries B's head as the forgery left it: the heads of
        // each disagree with B's segments in the file.
        #expect(damage.count == 2, "\(damage)")
        #expect(damage.allSatisfy { $0.loss == .region(byteCount: 0) && $0.reason.contains("group 3 has 4 segments") }, "\(damage)")
        #expect(damage.first?.reason.hasPrefix("record 9 ") == true, "\(damage)")
        // Its own group's items, the honest commit after the forgery's among them.
        let accounts = Set(try recovered.search(Query(.genericPassword, limit: .all), returning: [.attributes]).compactMap { $0.attributes?.string(.account) })
        #expect(accounts.contains("after the forgery"), "\(accounts.sorted())")
    }

    @Test("A record lost whole, then commits of every group: the holder of A counts the other groups' segments again from the next heads, and lists only the lost bytes")
    func countSetAgainAfterDamage() throws {
        let directory = TemporaryDirectory()
        let (path, _, added, lost, _, map) = try KeychainV3RecoveryTests.destroyedRecord(
            directory, order: ["A", "B-lost", "A", "B-big", "B-late", "A"], scoped: [(Self.scopedA, [Self.groupA])])
        #expect(throws: KeychainError.self) { _ = try Keychain.open(at: path, credential: Self.scopedA) }
        let recovered = try Keychain.open(at: path, credential: Self.scopedA, options: .init(recover: true))
        let damage = costs(recovered.recovery?.damage ?? [])
        #expect(damage.count == 1, "\(damage)")
        #expect(damage.first?.loss == .region(byteCount: lost.count))
        #expect(damage.first?.offset == map.physical(lost.lowerBound))
        let served = try liveSecrets(recovered)
        #expect(served == (added["A"] ?? [:]), "group A's 30 items, as written")
        withExtendedLifetime(directory) {}
    }

    @Test("Damage, then a commit whose heads leave group B out: every credential's recovering read lists that commit, beside the lost bytes — the holder of A too, whose count of B past the damage is a lower bound the heads must keep")
    func headsWithoutGroupAfterDamage() throws {
        let name = "reference-forged-heads-without-group-after-damage"
        let manifest = try Self.manifest(name)
        var credentials = [try ConformanceTests.credential(try #require(manifest["credential"] as? [String: Any]))]
        for other in (manifest["otherCredentials"] as? [[String: Any]]) ?? [] {
            let expect = try #require(other["expect"] as? [String: Any])
            guard expect["error"] as? String == "corrupted" else { continue }
            credentials.append(try ConformanceTests.credential(try #require(other["credential"] as? [String: Any])))
        }
        #expect(credentials.count == 4)
        for (index, credential) in credentials.enumerated() {
            let directory = TemporaryDirectory()
            let path = try Self.copy(name, into: directory)
            let recovered = try Keychain.open(at: path, credential: credential, options: .init(recover: true))
            let damage = costs(recovered.recovery?.damage ?? [])
            #expect(damage.contains { if case .region(let count) = $0.loss { count > 4_400 } else { false } }, "credential \(index): \(damage)")
            #expect(damage.contains { $0.loss == .region(byteCount: 0) && $0.reason.contains("group 3") }, "credential \(index): \(damage)")
        }
    }
}
