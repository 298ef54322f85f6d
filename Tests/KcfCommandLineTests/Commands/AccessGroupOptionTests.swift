import Foundation
import Testing

/// `--access-group GROUP` on the password commands: the group an added item goes into (part of its primary key,
/// as on Apple's keychain), and the only group find and delete look in. Without it, find and delete look in every
/// group, as before; `""` names the default group, the one of items added without the option.
@Suite("kcf: --access-group on add, find and delete")
struct AccessGroupOptionTests {
    /// A keychain with the same service and account in the default group, in "TEAM.mail" and in "TEAM.shared".
    static func threeGroups() throws -> KcfSandbox {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "imap", secret: "in the default group")
        try sandbox.addGeneric(account: "ann", service: "imap", secret: "in mail", extra: ["--access-group", "TEAM.mail"])
        try sandbox.addGeneric(account: "ann", service: "imap", secret: "in shared", extra: ["--access-group=TEAM.shared"])
        return sandbox
    }

    @Test("the same service and account in three groups are three items; find reads the group named")
    func addAndFind() throws {
        let sandbox = try Self.threeGroups()
        for (group, secret) in [("TEAM.mail", "in mail"), ("TEAM.shared", "in shared"), ("", "in the default group")] {
            let found = try sandbox.unlocked(["find-generic-password", "-s", "imap", "-a", "ann", "--access-group", group, "-w"])
            #expect(found.status == 0, "\(group): \(found.stderr)")
            #expect(found.stdout == secret + "\n", "\(group)")
        }
        let attributes = try sandbox.unlocked(["find-generic-password", "-s", "imap", "--access-group", "TEAM.shared"])
        #expect(attributes.stdout.contains("\"agrp\"<blob>=\"TEAM.shared\""), "\(attributes.stdout)")

        let other = try sandbox.unlocked(["find-generic-password", "-s", "imap", "--access-group", "TEAM.other"])
        #expect(other.status == 44, "a group with no such item finds nothing")
        #expect(other.stdout.isEmpty)

        // A second add into a group that has the item already is a duplicate there, and only there.
        let duplicate = try sandbox.unlocked(["add-generic-password", "-a", "ann", "-s", "imap", "--access-group", "TEAM.mail", "-w"],
                                             then: ["again"])
        #expect(duplicate.status == 45)
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "imap", "--access-group", "TEAM.mail", "-w"]).stdout == "in mail\n")
    }

    @Test("delete and add -U touch only the group named")
    func deleteAndUpdate() throws {
        let sandbox = try Self.threeGroups()
        let updated = try sandbox.unlocked(["add-generic-password", "-U", "-a", "ann", "-s", "imap", "--access-group", "TEAM.mail", "-w"],
                                           then: ["mail rotated"])
        #expect(updated.status == 0, "\(updated.stderr)")
        let deleted = try sandbox.unlocked(["delete-generic-password", "-s", "imap", "--access-group", "TEAM.shared"])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "imap", "--access-group", "TEAM.shared"]).status == 44)
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "imap", "--access-group", "TEAM.mail", "-w"]).stdout == "mail rotated\n")
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "imap", "--access-group", "", "-w"]).stdout
                == "in the default group\n")
        // Deleting the default group's item leaves the group that is not the default.
        #expect(try sandbox.unlocked(["delete-generic-password", "-s", "imap", "--access-group", ""]).status == 0)
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "imap", "-w"]).stdout == "mail rotated\n")
    }

    @Test("internet passwords take the option too")
    func internetPassword() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        for (group, secret) in [("TEAM.web", "web"), ("TEAM.cli", "cli")] {
            let added = try sandbox.unlocked(["add-internet-password", "-a", "ann", "-s", "example.com", "-r", "https",
                                              "--access-group", group, "-w"], then: [secret])
            #expect(added.status == 0, "\(added.stderr)")
        }
        let found = try sandbox.unlocked(["find-internet-password", "-s", "example.com", "--access-group", "TEAM.cli", "-w"])
        #expect(found.stdout == "cli\n", "\(found.stderr)")
        #expect(try sandbox.unlocked(["delete-internet-password", "-s", "example.com", "--access-group", "TEAM.web"]).status == 0)
        #expect(try sandbox.unlocked(["find-internet-password", "-s", "example.com", "-w"]).stdout == "cli\n")
    }

    @Test("--access-group without a value is a usage error that names it, and the help lists it")
    func usage() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let missing = try sandbox.unlocked(["find-generic-password", "-s", "imap", "--access-group"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("--access-group"), "\(missing.stderr)")
        for command in ["add-generic-password", "find-internet-password", "delete-generic-password"] {
            let help = try sandbox.run(["help", command])
            #expect(help.stdout.contains("--access-group GROUP"), "\(command): \(help.stdout)")
        }
    }
}
