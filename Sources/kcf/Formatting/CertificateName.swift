/// Text from a certificate's subject Name, for labels and `find-certificate -c`.
enum CertificateName {
    /// The last common name (2.5.4.3) in a DER Name, or `nil` when it has none or cannot be read.
    static func commonName(_ nameDER: [UInt8]) -> String? {
        guard let name = try? DER.single(nameDER), name.tag == 0x30, let sets = try? name.children() else { return nil }
        var found: String?
        for set in sets where set.tag == 0x31 {
            for pair in (try? set.children()) ?? [] where pair.tag == 0x30 {
                guard let parts = try? pair.children(), parts.count == 2, parts[0].tag == 0x06,
                      DER.objectIdentifier(parts[0].content) == "2.5.4.3" else { continue }
                found = text(of: parts[1]) ?? found
            }
        }
        return found
    }

    /// The text of a directory string: UTF8String, PrintableString, IA5String, T61String (read as Latin-1)
    /// or BMPString (UTF-16BE).
    static func text(of element: DER.Element) -> String? {
        switch element.tag {
        case 0x0C, 0x13, 0x16: return String(validating: element.content, as: UTF8.self)
        case 0x14: return String(element.content.map { Character(UnicodeScalar($0)) })
        case 0x1E:
            guard element.content.count % 2 == 0 else { return nil }
            let units = stride(from: 0, to: element.content.count, by: 2).map {
                UInt16(element.content[$0]) << 8 | UInt16(element.content[$0 + 1])
            }
            return String(decoding: units, as: UTF16.self)
        default: return nil
        }
    }
}
