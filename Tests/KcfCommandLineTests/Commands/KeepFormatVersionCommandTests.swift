import Foundation
import Testing

/// `KCF_KEEP_FORMAT_VERSION=1`: kcf keeps a version 1 keychain version 1 through compact and change-password, for
/// readers that know only version 1; `kcf upgrade` upgrades anyway. The version is read from the file's bytes 8–9.
@Suite("kcf: KCF_KEEP_FORMAT_VERSION")
struct KeepFormatVersionCommandTests {
    @Test("compact and change-password keep version 1 with KCF_KEEP_FORMAT_VERSION=1, upgrade does not; without it compact upgrades")
    func keeps() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain(formatVersion: 1)
        try sandbox.addGeneric(account: "ann", service: "svc", secret: "s3cret")
        let keep = ["KCF_KEEP_FORMAT_VERSION": "1"]
        #expect(try sandbox.run(["compact"], stdin: KcfSandbox.password + "\n", extra: keep).status == 0)
        #expect(try UpgradeCommandTests.versionOnDisk(sandbox) == 1)
        let change = try sandbox.run(["change-password"], stdin: KcfSandbox.password + "\nnew password\n", extra: keep)
        #expect(change.status == 0, "\(change.stderr)")
        #expect(try UpgradeCommandTests.versionOnDisk(sandbox) == 1)
        #expect(try sandbox.run(["find-generic-password", "-s", "svc", "-w"], stdin: "new password\n").stdout == "s3cret\n")
        #expect(try sandbox.run(["upgrade"], stdin: "new password\n", extra: keep).status == 0)
        #expect(try UpgradeCommandTests.versionOnDisk(sandbox) == 2)

        let other = try KcfSandbox()
        try other.createKeychain(formatVersion: 1)
        #expect(try other.run(["compact"], stdin: KcfSandbox.password + "\n", extra: ["KCF_KEEP_FORMAT_VERSION": "0"]).status == 0)
        #expect(try UpgradeCommandTests.versionOnDisk(other) == 2)
    }
}
