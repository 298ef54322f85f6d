import Foundation
import Testing
@testable import KeychainFile

/// `kcf verify` and `kcf repair` scrub a version 3 keychain's parity as a version 2 one's (SPEC.md §19.5) with a
/// credential that reaches the whole keychain; with one scoped to access groups, which cannot verify the other
/// groups' records, verify says the parity was not compared and repair refuses with status 30, copying nothing.
@Suite("kcf verify and repair: the parity of a version 3 keychain")
struct ParityScrubV3CommandTests {
    static let scopedPassword = "scoped to group a"

    /// A version 3 sandbox keychain of 300 items of group A, whose records (padded pages, written again by the
    /// rewrites that added group A and the credential) fill two chunks and part of a third — one-page header runs:
    /// chunk 0's parity at version 2's place — with a second password that reaches group A only.
    static func sandbox() throws -> KcfSandbox {
        let group = ScopedCredentialCommandTests.groupA
        let (sandbox, keychain) = try ScopedCredentialCommandTests.sandbox(items: [])
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<300 {
                try batch.add(GenericPassword(
                    service: "svc", account: "user\(index)", password: "secret \(index) " + String(repeating: "x", count: 200), accessGroup: group))
            }
        }
        try keychain.addCredential(
            .password(scopedPassword), scope: .groups([group]), keyDerivation: .pbkdf2(.insecureForTesting(1_000)))
        #expect(try sandbox.keychainBytes().count > ParityScrubCommandTests.parityOfChunk0.upperBound, "chunk 0 is complete")
        return sandbox
    }

    @Test("verify compares a version 3 keychain's parity and names a chunk whose parity was zeroed; repair rewrites it in place")
    func fullCredential() throws {
        let sandbox = try Self.sandbox()
        let pristine = try sandbox.keychainBytes()
        let clean = try sandbox.unlocked(["verify"])
        #expect(clean.status == 0, "\(clean.stderr)")
        #expect(clean.stdout.contains("parity: matches the records in 3 chunks compared"), "\(clean.stdout)")

        var torn = pristine
        for offset in ParityScrubCommandTests.parityOfChunk0 { torn[offset] = 0 }
        try Data(torn).write(to: URL(fileURLWithPath: sandbox.keychain))
        let verify = try sandbox.unlocked(["verify"])
        #expect(verify.status == 0, "\(verify.stderr)")
        let line = verify.stdout.split(separator: "\n").first { $0.hasPrefix("parity: stale: ") }
        #expect(line?.contains("log chunk 0 (data at file bytes 32768–89855): parity at file bytes 89856–98047") == true, "\(verify.stdout)")

        let backup = sandbox.file("before-repair.kcf")
        let repair = try sandbox.unlocked(["repair", "--backup", backup])
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stdout.contains("in place"), "\(repair.stdout)")
        #expect(repair.stdout.contains("parity: rewrote log chunk 0"), "\(repair.stdout)")
        #expect(try sandbox.keychainBytes(backup) == torn, "the copy is the file as it was")
        #expect(try sandbox.keychainBytes() == pristine, "only chunk 0's parity was written")
    }

    @Test("With a credential scoped to access groups, verify says the parity was not compared and exits 0; repair exits 30 and copies nothing")
    func scopedCredential() throws {
        let sandbox = try Self.sandbox()
        var torn = try sandbox.keychainBytes()
        for offset in ParityScrubCommandTests.parityOfChunk0 { torn[offset] = 0 }
        try Data(torn).write(to: URL(fileURLWithPath: sandbox.keychain))
        let scoped = Self.scopedPassword + "\n"
        let verify = try sandbox.run(["verify"], stdin: scoped)
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdout.contains("items: 300"), "\(verify.stdout)")
        #expect(verify.stdout.contains("parity: not compared (this credential reaches only some access groups"), "\(verify.stdout)")
        #expect(!verify.stdout.contains("--recover"), "\(verify.stdout)")
        let json = try sandbox.run(["verify", "--json"], stdin: scoped)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["parity"] is NSNull, "\(json.stdout)")

        let backup = sandbox.file("before-repair.kcf")
        let repair = try sandbox.run(["repair", "--backup", backup], stdin: scoped)
        #expect(repair.status == 30, "\(repair.stdout)\(repair.stderr)")
        #expect(!FileManager.default.fileExists(atPath: backup), "no copy for a refused repair")
        #expect(try sandbox.keychainBytes() == torn, "nothing written")
    }
}
