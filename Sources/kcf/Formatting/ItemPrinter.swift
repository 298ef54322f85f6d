import KeychainFile

/// Prints items as `security find-…` and `dump-keychain` do:
///
/// ```
/// keychain: "/home/ann/.local/share/kcf/default.kcf"
/// class: "genp"
/// attributes:
///     "acct"<blob>="ann"
///     "svce"<blob>="mail.example.com"
/// ```
enum ItemPrinter {
    /// The lines for one item: keychain, class and every attribute, ordered by four-character name.
    static func lines(keychain: String, attributes: ItemAttributes) -> [String] {
        var lines = [
            "keychain: " + SecurityText.quoted(Array(keychain.utf8)),
            "class: \"\(AttributeCodes.code(of: attributes.itemClass))\"",
            "attributes:",
        ]
        let entries = attributes.map { (attribute: $0.attribute, value: $0.value) }
            .sorted { (AttributeCodes.code(of: $0.attribute), $0.attribute.tag) < (AttributeCodes.code(of: $1.attribute), $1.attribute.tag) }
        for entry in entries {
            let code = AttributeCodes.code(of: entry.attribute)
            let kind = AttributeCodes.kind(of: entry.attribute)
            lines.append("    \"\(code)\"\(kind.rawValue)=\(SecurityText.value(entry.value, of: entry.attribute))")
        }
        return lines
    }

    /// Prints one item to stdout.
    static func print(keychain: String, attributes: ItemAttributes) {
        for line in lines(keychain: keychain, attributes: attributes) { Output.line(line) }
    }

    /// The `password: …` line `security -g` prints (on stderr).
    static func passwordLine(_ secret: [UInt8]) -> String {
        "password: " + SecurityText.blob(secret)
    }
}
