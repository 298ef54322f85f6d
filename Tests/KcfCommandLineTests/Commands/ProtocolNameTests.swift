import Foundation
import Testing

/// `-r` and `-t` of the internet password commands take names (`https`, `html-form`) beside Apple's
/// four-character codes (`htps`, `form`). The codes expected are Apple's, from its SecItem.h constants
/// (kSecAttrProtocolHTTPS is 'htps', kSecAttrProtocolSOCKS 'sox ', kSecAttrAuthenticationTypeHTMLForm 'form').
@Suite("kcf: protocol and authentication type names beside four-character codes")
struct ProtocolNameTests {
    @Test("an item added with -r https -t html-form is stored as htps/form and found by names, codes and any case")
    func namesAndCodesMeanTheSame() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let added = try sandbox.unlocked(["add-internet-password", "-a", "ann", "-s", "example.com", "-r", "https", "-t", "html-form", "-w"],
                                         then: ["web"])
        #expect(added.status == 0, "\(added.stderr)")
        let found = try sandbox.unlocked(["find-internet-password", "-s", "example.com", "-r", "htps", "-t", "form"])
        #expect(found.status == 0, "\(found.stderr)")
        #expect(found.stdout.contains("\"ptcl\"<uint32>=\"htps\""))
        #expect(found.stdout.contains("\"atyp\"<uint32>=\"form\""))
        for (protocolWord, authenticationWord) in [("https", "html-form"), ("HTTPS", "HTML-Form"), ("htps", "html-form")] {
            let result = try sandbox.unlocked(["find-internet-password", "-r", protocolWord, "-t", authenticationWord, "-w"])
            #expect(result.stdout == "web\n", "-r \(protocolWord) -t \(authenticationWord): \(result.stderr)")
        }
        // Another protocol is another item: -r http is 'http', not https.
        #expect(try sandbox.unlocked(["find-internet-password", "-r", "http"]).status == 44)
    }

    @Test("names whose code differs from the name: socks is 'sox ', imaps 'imps', http-basic 'http', telnet 'teln'")
    func otherNames() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let cases = [("socks", "default", "sox ", "dflt"), ("imaps", "http-basic", "imps", "http"), ("telnet", "http-digest", "teln", "httd")]
        for (index, (protocolName, authenticationName, protocolCode, authenticationCode)) in cases.enumerated() {
            let server = "host\(index).example"
            let added = try sandbox.unlocked(["add-internet-password", "-s", server, "-r", protocolName, "-t", authenticationName, "-w"],
                                             then: ["s\(index)"])
            #expect(added.status == 0, "\(added.stderr)")
            let found = try sandbox.unlocked(["find-internet-password", "-s", server])
            #expect(found.stdout.contains("\"ptcl\"<uint32>=\"\(protocolCode)\""), "\(protocolName): \(found.stdout)")
            #expect(found.stdout.contains("\"atyp\"<uint32>=\"\(authenticationCode)\""), "\(authenticationName): \(found.stdout)")
        }
        // A three-letter code is padded: `-r ftp` is 'ftp ', the code of the name ftp.
        #expect(try sandbox.unlocked(["add-internet-password", "-s", "files.example", "-r", "ftp", "-w"], then: ["f"]).status == 0)
        #expect(try sandbox.unlocked(["find-internet-password", "-r", "ftp ", "-w"]).stdout == "f\n")
    }

    @Test("a word that is neither a name nor a code is a usage error naming some names")
    func unknownName() throws {
        let sandbox = try KcfSandbox()
        let result = try sandbox.run(["find-internet-password", "-r", "gopher"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("\"gopher\" is neither a protocol name (https, http,"))
        let authentication = try sandbox.run(["find-internet-password", "-t", "kerberos"])
        #expect(authentication.status == 2)
        #expect(authentication.stderr.contains("\"kerberos\" is neither an authentication type name (default, html-form,"))
    }

    @Test("the demo explains each four-character code it prints, with the name kcf takes for it")
    func demoExplainsCodes() throws {
        let sandbox = try KcfSandbox()
        let result = try sandbox.run(["demo"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("protocol htps, authentication form"))
        #expect(result.stdout.contains("   code htps:          the protocol HTTPS as Apple's keychain stores it; kcf takes -r https or -r htps\n"))
        #expect(result.stdout.contains("   code form:          a login through an HTML form; kcf takes -t html-form or -t form\n"))
    }
}
