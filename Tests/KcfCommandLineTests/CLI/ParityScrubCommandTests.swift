import Foundation
import Testing
import KeychainFile

/// `kcf verify` compares each chunk's stored parity with its records (a scrub, SPEC.md §19.5) and names the stale
/// ones; `kcf repair` rewrites them in place.
@Suite("kcf verify and repair: stale parity")
struct ParityScrubCommandTests {
    /// Where chunk 0's parity lies in a version 2 file: after its 57,088 data bytes, from file byte 32,768.
    static let parityOfChunk0 = 89_856..<98_048

    /// A version 2 sandbox keychain of 300 items whose records fill more than the log's first chunk.
    static func sandbox() throws -> KcfSandbox {
        let sandbox = try KcfSandbox()
        var options = Keychain.CreationOptions(passwordIterations: .insecureForTesting(1_000))
        options.formatVersion = 2
        let keychain = try Keychain.create(at: sandbox.keychain, credential: .password(KcfSandbox.password), options: options)
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<300 {
                try batch.add(GenericPassword(service: "svc", account: "user\(index)", password: "secret \(index) " + String(repeating: "x", count: 200)))
            }
        }
        #expect(try sandbox.keychainBytes().count > parityOfChunk0.upperBound, "chunk 0 is complete")
        return sandbox
    }

    @Test("verify names a complete chunk whose parity a torn write zeroed, by its file bytes, and exits 0; repair rewrites it in place, keeping a copy; verify then finds none")
    func staleParityFoundAndRewritten() throws {
        let sandbox = try Self.sandbox()
        let pristine = try sandbox.keychainBytes()
        let clean = try sandbox.unlocked(["verify"])
        #expect(clean.status == 0, "\(clean.stderr)")
        #expect(clean.stdout.contains("parity: matches the records in 2 chunks compared"), "\(clean.stdout)")
        #expect(!clean.stdout.contains("stale"), "\(clean.stdout)")

        var torn = pristine
        for offset in Self.parityOfChunk0 { torn[offset] = 0 }
        try Data(torn).write(to: URL(fileURLWithPath: sandbox.keychain))
        let verify = try sandbox.unlocked(["verify"])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdout.contains("items: 300"), "\(verify.stdout)")
        let line = verify.stdout.split(separator: "\n").first { $0.hasPrefix("parity: stale: ") }
        #expect(line?.contains("log chunk 0 (data at file bytes 32768–89855): parity at file bytes 89856–98047") == true, "\(verify.stdout)")
        #expect(verify.stdout.contains("`kcf repair` rewrites it in place"), "\(verify.stdout)")
        #expect(verify.stdout.contains("result: OK"), "\(verify.stdout)")

        let json = try sandbox.unlocked(["verify", "--json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let parity = try #require(object["parity"] as? [String: Any])
        let stale = try #require(parity["stale"] as? [[String: Any]])
        #expect(stale.count == 1 && stale.first?["chunk"] as? Int == 0, "\(json.stdout)")
        let parityBytes = try #require(stale.first?["parityFileBytes"] as? [String: Any])
        #expect(parityBytes["start"] as? Int == 89_856 && parityBytes["end"] as? Int == 98_048)

        let backup = sandbox.file("before-repair.kcf")
        let repair = try sandbox.unlocked(["repair", "--backup", backup])
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stdout.contains("in place"), "\(repair.stdout)")
        #expect(repair.stdout.contains("parity: rewrote log chunk 0 (data at file bytes 32768–89855)"), "\(repair.stdout)")
        #expect(try sandbox.keychainBytes(backup) == torn, "the copy is the file as it was")
        #expect(try sandbox.keychainBytes() == pristine, "only chunk 0's parity was written")

        let after = try sandbox.unlocked(["verify"])
        #expect(after.status == 0)
        #expect(!after.stdout.contains("stale"), "\(after.stdout)")
        #expect(after.stdout.contains("parity: matches the records in 2 chunks compared"), "\(after.stdout)")
    }

    @Test("verify says a version 1 keychain keeps no parity, and that one opened with --recover was not compared")
    func notCompared() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain(formatVersion: 1)
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "one")
        let v1 = try sandbox.unlocked(["verify"])
        #expect(v1.status == 0, "\(v1.stderr)")
        #expect(v1.stdout.contains("parity: none (format version 1 keeps no parity)"), "\(v1.stdout)")
        let json = try sandbox.unlocked(["verify", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["parity"] is NSNull, "\(json.stdout)")

        let v2 = try Self.sandbox()
        let recovered = try v2.unlocked(["verify", "--recover"])
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(recovered.stdout.contains("parity: not compared (opened with --recover"), "\(recovered.stdout)")
    }
}
