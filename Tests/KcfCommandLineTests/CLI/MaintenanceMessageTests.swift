import Foundation
import Testing

/// What `verify` and `salvage` say when things go wrong: the error before the advice, and no guess at which
/// keychain is the damaged one.
@Suite("kcf verify and salvage: error order and named sources")
struct MaintenanceMessageTests {
    @Test("verify on a damaged keychain prints its error line first, then the salvage hint")
    func verifyErrorBeforeHint() throws {
        let sandbox = try KcfSandbox()
        try DamageCommandTests.compactedKeychain(sandbox, count: 200)
        for index in 0..<3 { try sandbox.addGeneric(account: "late", service: "late \(index)", secret: "\(index)") }
        _ = try DamageCommandTests.flip(sandbox, at: DamageCommandTests.firstRecord(try sandbox.keychainBytes()) + 3_000)
        let verify = try sandbox.unlocked(["verify"])
        #expect(verify.status == 93, "\(verify.stderr)")
        let lines = verify.stderr.split(separator: "\n").map(String.init)
        let errorLine = lines.firstIndex { $0.hasPrefix("kcf: verify: ") && $0.contains("corrupt") }
        let hintLine = lines.firstIndex { $0.contains("`kcf salvage DEST`") }
        #expect(errorLine != nil && hintLine != nil, "\(lines)")
        if let errorLine, let hintLine { #expect(errorLine < hintLine, "\(lines)") }
    }

    @Test("salvage with only DEST and no keychain named refuses (usage), creates nothing and touches nothing")
    func salvageRefusesToGuess() throws {
        let sandbox = try KcfSandbox()
        // The per-user default keychain exists (XDG_DATA_HOME is inside the sandbox) and is the one a guess takes.
        let defaultPath = sandbox.file("xdg/kcf/default.kcf")
        try FileManager.default.createDirectory(atPath: sandbox.file("xdg/kcf"), withIntermediateDirectories: true)
        try sandbox.createKeychain(at: defaultPath)
        let unnamed = ["KCF_KEYCHAIN": "", "XDG_DATA_HOME": sandbox.file("xdg")]
        let before = try Data(contentsOf: URL(fileURLWithPath: defaultPath))
        let refused = try sandbox.run(["salvage", sandbox.file("meant-as-source.kcf")], stdin: KcfSandbox.password + "\n", extra: unnamed)
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("name the damaged keychain"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.file("meant-as-source.kcf")))
        #expect(try Data(contentsOf: URL(fileURLWithPath: defaultPath)) == before)
        // Named as KEYCHAIN, the same default file is salvaged.
        let named = try sandbox.run(["salvage", sandbox.file("copy.kcf"), defaultPath], stdin: KcfSandbox.password + "\n", extra: unnamed)
        #expect(named.status == 0, "\(named.stderr)")
    }
}
