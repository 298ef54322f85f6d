import Foundation
import Testing
import KeychainFile

/// What `kcf verify` says of a format version 2 file whose damage its parity repaired.
@Suite("kcf verify: repairs of a version 2 file")
struct RepairReportCommandTests {
    @Test("verify on a version 2 file with a zeroed sector exits 0, serves every item and names the repair; undamaged, it names none")
    func verifyNamesRepairs() throws {
        let sandbox = try KcfSandbox()
        var options = Keychain.CreationOptions(passwordIterations: .insecureForTesting(1_000))
        options.formatVersion = 2
        let keychain = try Keychain.create(at: sandbox.keychain, credential: .password(KcfSandbox.password), options: options)
        for index in 0..<200 {
            try keychain.add(GenericPassword(service: "svc", account: "user\(index)", password: "secret \(index) " + String(repeating: "x", count: 100)))
        }
        let clean = try sandbox.unlocked(["verify"])
        #expect(clean.status == 0, "\(clean.stderr)")
        #expect(!clean.stdout.contains("repair"), "\(clean.stdout)")
        // The third 4 KiB sector of the log (which starts at byte 32,768) reads as zeros.
        var bytes = try sandbox.keychainBytes()
        for offset in 40_960..<45_056 { bytes[offset] = 0 }
        try Data(bytes).write(to: URL(fileURLWithPath: sandbox.keychain))
        let verify = try sandbox.unlocked(["verify"])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdout.contains("items: 200"), "\(verify.stdout)")
        let line = verify.stdout.split(separator: "\n").first { $0.hasPrefix("repairs: repaired ") }
        #expect(line?.contains("log chunk 0") == true, "\(verify.stdout)")
        let json = try sandbox.unlocked(["verify", "--json"])
        #expect(json.stdout.contains("\"repairs\""), "\(json.stdout)")
    }
}
