import KeychainFile

/// The attribute options of the generic and internet password commands, with `security`'s letters.
enum PasswordAttributeOptions {
    /// `add-`, `find-` and `delete-generic-password`.
    static let generic: [AttributeOption] = [
        text("a", "ACCOUNT", .account, "account name"),
        text("s", "SERVICE", .service, "service name"),
    ] + common + [
        AttributeOption(spec: OptionSpec("G", .value("VALUE"), help: "generic attribute (stored as its UTF-8 bytes)"),
                        attribute: .generic, parse: { .bytes(Array($0.utf8)) }),
    ]

    /// `add-`, `find-` and `delete-internet-password`.
    static let internet: [AttributeOption] = [
        text("a", "ACCOUNT", .account, "account name"),
        text("s", "SERVER", .server, "server name"),
        text("d", "DOMAIN", .securityDomain, "security domain"),
        text("p", "PATH", .path, "path"),
        AttributeOption(spec: OptionSpec("P", .value("PORT"), help: "port number (0 … 65535)"),
                        attribute: .port, parse: port),
        named("r", "PROTOCOL", .protocolType, .protocols,
              "protocol: a name (https, http, ftp, ssh, imaps, …; any: none given) or a four-character code (htps, http, ftp, ssh, imps, …)"),
        named("t", "AUTHTYPE", .authenticationType, .authenticationTypes,
              "authentication type: a name (default, html-form, http-basic, http-digest, ntlm, …; any: none given) or a code (dflt, form, http, httd, …)"),
    ] + common

    /// Options both password classes have.
    private static let common: [AttributeOption] = [
        text("l", "LABEL", .label, "label"),
        text("j", "COMMENT", .comment, "comment"),
        text("D", "KIND", .itemDescription, "kind (the description attribute)"),
        code("c", "CREATOR", .creator, "creator, a four-character code"),
        code("C", "TYPE", .itemType, "item type, a four-character code"),
        AttributeOption(spec: OptionSpec(long: "access-group", .value("GROUP"),
                                         help: "access group (agrp): the new item's, or the only group searched; \"\" is the default group"),
                        attribute: .accessGroup, parse: { .string($0) }),
    ]

    private static func text(_ letter: Character, _ name: String, _ attribute: Attribute, _ help: String) -> AttributeOption {
        AttributeOption(spec: OptionSpec(letter, .value(name), help: help), attribute: attribute, parse: { .string($0) })
    }

    private static func code(_ letter: Character, _ name: String, _ attribute: Attribute, _ help: String) -> AttributeOption {
        AttributeOption(spec: OptionSpec(letter, .value(name), help: help), attribute: attribute, parse: fourCharacterCode)
    }

    private static func named(
        _ letter: Character, _ name: String, _ attribute: Attribute, _ names: FourCharacterCodeNames, _ help: String
    ) -> AttributeOption {
        AttributeOption(spec: OptionSpec(letter, .value(name), values: .choices(names.names), help: help), attribute: attribute,
                        parse: { (text) throws(CommandError) in .integer(Int64(try names.code(for: text))) })
    }

    /// A four-character code; shorter text is padded with spaces (`ftp` is `ftp `), as the codes are
    /// written with trailing spaces that are awkward on a command line.
    static func fourCharacterCode(_ text: String) throws(CommandError) -> AttributeValue {
        let bytes = Array(text.utf8)
        guard (1...4).contains(bytes.count), bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw .usage("\"\(text)\" is not a four-character code (1 to 4 printable ASCII characters)")
        }
        let padded = bytes + [UInt8](repeating: 0x20, count: 4 - bytes.count)
        return .integer(Int64(padded.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }))
    }

    private static func port(_ text: String) throws(CommandError) -> AttributeValue {
        guard let port = UInt16(text) else { throw .usage("\"\(text)\" is not a port number (0 … 65535)") }
        return .integer(Int64(port))
    }
}
