/// A certificate's subject or issuer Name as RFC 4514 text, such as `CN=leaf.example.com,O=Example,C=CH`.
///
/// The relative distinguished names are written last first, joined by `,`; the values of a multi-valued one are
/// joined by `+` in the order the DER holds them. Attribute types with an RFC 4514 short name (CN, L, ST, O, OU,
/// C, STREET, DC, UID) and a string value are written as text, with `"`, `+`, `,`, `;`, `<`, `>` and `\`
/// escaped by a backslash, as are a leading `#` or space and a trailing space, and NUL as `\00`. Other types
/// are written as their dotted OID, and other values as `#` and the hex of their DER (RFC 4514 §2.4), so
/// `emailAddress` is `1.2.840.113549.1.9.1=#160f616e6e…`.
enum DistinguishedName {
    /// The RFC 4514 text of a DER Name, or `nil` when the bytes are not one.
    static func rfc4514(_ nameDER: [UInt8]) -> String? {
        guard let name = try? DER.single(nameDER), name.tag == 0x30, let relativeNames = try? name.children() else { return nil }
        var parts: [String] = []
        for relativeName in relativeNames {
            guard relativeName.tag == 0x31, let pairs = try? relativeName.children(), !pairs.isEmpty else { return nil }
            var values: [String] = []
            for pair in pairs {
                guard pair.tag == 0x30, let fields = try? pair.children(), fields.count == 2, fields[0].tag == 0x06 else { return nil }
                values.append(text(type: DER.objectIdentifier(fields[0].content), value: fields[1]))
            }
            parts.append(values.joined(separator: "+"))
        }
        return parts.reversed().joined(separator: ",")
    }

    /// RFC 4514 §3's short names, by OID.
    private static let shortNames = [
        "2.5.4.3": "CN", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O", "2.5.4.11": "OU", "2.5.4.6": "C",
        "2.5.4.9": "STREET", "0.9.2342.19200300.100.1.25": "DC", "0.9.2342.19200300.100.1.1": "UID",
    ]

    /// One `type=value`.
    private static func text(type: String, value: DER.Element) -> String {
        if let short = shortNames[type], let string = CertificateName.text(of: value) {
            return short + "=" + escaped(string)
        }
        return (shortNames[type] ?? type) + "=#" + Hex.lower(DER.encode(tag: value.tag, value.content))
    }

    /// A string value with RFC 4514 §2.4's escapes.
    private static func escaped(_ value: String) -> String {
        let characters = Array(value)
        var result = ""
        for (index, character) in characters.enumerated() {
            switch character {
            case "\"", "+", ",", ";", "<", ">", "\\":
                result += "\\" + String(character)
            case "\u{0}":
                result += "\\00"
            case "#" where index == 0, " " where index == 0 || index == characters.count - 1:
                result += "\\" + String(character)
            default:
                result.append(character)
            }
        }
        return result
    }
}
