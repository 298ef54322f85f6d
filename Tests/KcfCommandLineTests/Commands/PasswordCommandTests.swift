import Foundation
import Testing

@Suite("kcf: generic and internet passwords")
struct PasswordCommandTests {
    @Test("add, find (attributes and -w), delete a generic password; a missing one exits 44")
    func genericPasswordRoundTrip() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "mail.example.com", secret: "s3cret mail", extra: ["-l", "Ann's mail", "-j", "note"])

        let found = try sandbox.unlocked(["find-generic-password", "-a", "ann", "-s", "mail.example.com"])
        #expect(found.status == 0, "\(found.stderr)")
        #expect(found.stdout.contains("keychain: \"\(sandbox.keychain)\""))
        #expect(found.stdout.contains("class: \"genp\""))
        #expect(found.stdout.contains("\"acct\"<blob>=\"ann\""))
        #expect(found.stdout.contains("\"svce\"<blob>=\"mail.example.com\""))
        #expect(found.stdout.contains("\"labl\"<blob>=\"Ann's mail\""))
        #expect(found.stdout.contains("\"icmt\"<blob>=\"note\""))
        #expect(!found.stdout.contains("s3cret"), "attributes only, no secret")

        let secret = try sandbox.unlocked(["find-generic-password", "-s", "mail.example.com", "-w"])
        #expect(secret.status == 0)
        #expect(secret.stdout == "s3cret mail\n", "-w prints only the secret")

        let shown = try sandbox.unlocked(["find-generic-password", "-a", "ann", "-g"])
        #expect(shown.stderr.contains("password: \"s3cret mail\""), "-g prints the secret on stderr as security does")

        let deleted = try sandbox.unlocked(["delete-generic-password", "-a", "ann", "-s", "mail.example.com"])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.stdout.contains("password has been deleted."))

        let missing = try sandbox.unlocked(["find-generic-password", "-a", "ann"])
        #expect(missing.status == 44)
        #expect(missing.stdout.isEmpty)
        #expect(missing.stderr.contains("could not be found"))
        #expect(try sandbox.unlocked(["delete-generic-password", "-a", "ann"]).status == 44)
    }

    @Test("a duplicate add exits 45 and changes nothing; -U updates the secret and the attributes given")
    func duplicateAndUpdate() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "vpn", secret: "first", extra: ["-l", "VPN"])

        let duplicate = try sandbox.unlocked(["add-generic-password", "-a", "ann", "-s", "vpn", "-w"], then: ["second"])
        #expect(duplicate.status == 45)
        #expect(duplicate.stderr.contains("already exists"))
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "vpn", "-w"]).stdout == "first\n")

        let updated = try sandbox.unlocked(["add-generic-password", "-U", "-a", "ann", "-s", "vpn", "-j", "rotated", "-w"], then: ["second"])
        #expect(updated.status == 0, "\(updated.stderr)")
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "vpn", "-w"]).stdout == "second\n")
        let attributes = try sandbox.unlocked(["find-generic-password", "-s", "vpn"]).stdout
        #expect(attributes.contains("\"icmt\"<blob>=\"rotated\""))
        #expect(attributes.contains("\"labl\"<blob>=\"VPN\""), "attributes not given are kept")

        // -U on an item that does not exist adds it.
        try sandbox.addGeneric(account: "bob", service: "vpn", secret: "bobs", extra: ["-U"])
        #expect(try sandbox.unlocked(["find-generic-password", "-a", "bob", "-w"]).stdout == "bobs\n")
    }

    @Test("the secret can come from `-w -` or --secret-stdin; the keychain password from KCF_PASSWORD")
    func secretSources() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let dash = try sandbox.unlocked(["add-generic-password", "-a", "a", "-s", "one", "-w", "-"], then: ["from dash"])
        #expect(dash.status == 0, "\(dash.stderr)")
        let flag = try sandbox.unlocked(["add-generic-password", "-a", "a", "-s", "two", "--secret-stdin"], then: ["from flag"])
        #expect(flag.status == 0, "\(flag.stderr)")

        let environment = ["KCF_PASSWORD": KcfSandbox.password]
        #expect(try sandbox.run(["find-generic-password", "-s", "one", "-w"], extra: environment).stdout == "from dash\n")
        #expect(try sandbox.run(["find-generic-password", "-s", "two", "-w"], extra: environment).stdout == "from flag\n")
        // With the keychain password in the environment, stdin's first line is the item's secret.
        let added = try sandbox.run(["add-generic-password", "-a", "a", "-s", "three", "-w"], stdin: "env secret\n", extra: environment)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try sandbox.run(["find-generic-password", "-s", "three", "-w"], extra: environment).stdout == "env secret\n")
        // No secret line left on stdin is an error, not an empty secret.
        let noSecret = try sandbox.run(["add-generic-password", "-a", "a", "-s", "four", "-w", "-"], stdin: "", extra: environment)
        #expect(noSecret.status == 1)
        #expect(noSecret.stderr.contains("no secret on stdin"))
    }

    @Test("a wrong password exits 51, from stdin and from KCF_PASSWORD")
    func wrongPassword() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "x")
        let fromStdin = try sandbox.run(["find-generic-password", "-a", "ann"], stdin: "not the password\n")
        #expect(fromStdin.status == 51)
        #expect(fromStdin.stderr.contains("password does not open"))
        let fromEnvironment = try sandbox.run(["find-generic-password", "-a", "ann"], extra: ["KCF_PASSWORD": "wrong"])
        #expect(fromEnvironment.status == 51)
    }

    @Test("add, find, delete an internet password with protocol, port, path, domain and authentication type")
    func internetPasswordRoundTrip() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let added = try sandbox.unlocked(
            ["add-internet-password", "-a", "ann", "-s", "example.com", "-r", "htps", "-P", "443", "-p", "/login",
             "-d", "realm", "-t", "form", "-l", "Example", "-w", "-"], then: ["web s3cret"])
        #expect(added.status == 0, "\(added.stderr)")
        // Another item differing only in the port: a different primary key.
        let other = try sandbox.unlocked(
            ["add-internet-password", "-a", "ann", "-s", "example.com", "-r", "htps", "-P", "8443", "-w"], then: ["other"])
        #expect(other.status == 0, "\(other.stderr)")

        let found = try sandbox.unlocked(["find-internet-password", "-s", "example.com", "-P", "443"])
        #expect(found.status == 0, "\(found.stderr)")
        for line in ["class: \"inet\"", "\"srvr\"<blob>=\"example.com\"", "\"ptcl\"<uint32>=\"htps\"", "\"port\"<uint32>=0x000001BB",
                     "\"path\"<blob>=\"/login\"", "\"sdmn\"<blob>=\"realm\"", "\"atyp\"<uint32>=\"form\""] {
            #expect(found.stdout.contains(line), "missing \(line) in \(found.stdout)")
        }
        #expect(try sandbox.unlocked(["find-internet-password", "-s", "example.com", "-P", "443", "-w"]).stdout == "web s3cret\n")
        #expect(try sandbox.unlocked(["find-internet-password", "-s", "example.com", "-P", "8443", "-w"]).stdout == "other\n")
        // `-r ftp` is the code "ftp " (padded), which no item has.
        #expect(try sandbox.unlocked(["find-internet-password", "-s", "example.com", "-r", "ftp"]).status == 44)

        #expect(try sandbox.unlocked(["delete-internet-password", "-s", "example.com", "-P", "443"]).status == 0)
        #expect(try sandbox.unlocked(["find-internet-password", "-s", "example.com", "-P", "443"]).status == 44)
        #expect(try sandbox.unlocked(["find-internet-password", "-s", "example.com", "-w"]).stdout == "other\n")
        let duplicate = try sandbox.unlocked(
            ["add-internet-password", "-a", "ann", "-s", "example.com", "-r", "htps", "-P", "8443", "-w"], then: ["again"])
        #expect(duplicate.status == 45)
    }
}
