import KeychainFile

/// The keychain items for the items of a `security dump-keychain -d` text (see ``SecurityDumpReader``).
///
/// Generic passwords (`genp`) and internet passwords (`inet`) keep their class and their attributes under
/// the same codes: `acct`, `svce`, `srvr`, `sdmn`, `ptcl`, `atyp`, `port`, `path`, `desc`, `icmt`, `crtr`, `type`,
/// `invi`, `nega`, `gena`, and the print name (attribute 7) as the label; their data is the secret, as it is
/// (a secure note's is Apple's property list). `kcf dump-keychain -d` text reads as well, with its `labl`, `agrp`,
/// `pdmn` and `sync`. Certificates (class 0x80001000, or `cert`) are imported from their data,
/// the DER, with their label. The creation and modification dates are not kept (the keychain dates what it
/// adds); keys, whose data is wrapped by the keychain they came from, and other classes are skipped, and so is
/// an item without data (a dump made without `-d`). Attributes kcf has no place for (the alias, attribute 8;
/// `cusi`, `prot`, `scrp`) are reported when they have a value.
enum SecurityDumpImport {
    /// The items of `dump`.
    static func items(from dump: [SecurityDumpItem], report: inout ImportReport) -> [ImportedItem] {
        var items: [ImportedItem] = []
        for (number, item) in dump.enumerated() {
            let nameTags = keyClasses.contains(item.itemClass ?? 0) ? [keyPrintName] : [printName, code("labl")]
            let name = item.attributes.first { nameTags.contains($0.tag) }?.value
            let origin = "item \(number + 1) at line \(item.line)" + (name.map { " (\(ImportReport.quoted(String(decoding: $0, as: UTF8.self))))" } ?? "")
            if item.hadAccessList { report.notKept("access control lists (dump-keychain -a)", in: origin) }
            guard let itemClass = item.itemClass else { continue }
            switch itemClass {
            case code("genp"), code("inet"):
                if let imported = password(item, internet: itemClass == code("inet"), origin: origin, report: &report) {
                    items.append(imported)
                }
            case certificateClass, code("cert"):
                if let imported = certificate(item, origin: origin, report: &report) { items.append(imported) }
            case _ where keyClasses.contains(itemClass):
                report.skip(origin, "a key: its data is wrapped by the keychain it came from; export it with `security export` and import the file")
            default:
                report.skip(origin, "its class \(SecurityText.uint32(Int64(itemClass))) is not one kcf imports (genp, inet, certificates)")
            }
        }
        return items
    }

    /// A generic or internet password, or `nil` after reporting why not.
    private static func password(_ item: SecurityDumpItem, internet: Bool, origin: String, report: inout ImportReport) -> ImportedItem? {
        guard let data = item.data else {
            report.skip(origin, "no data: the dump was made without -d")
            return nil
        }
        var values: [KeychainFile.Attribute: AttributeValue] = [:]
        for attribute in item.attributes {
            guard let value = attribute.value else { continue }
            let shown = "attribute \(SecurityText.uint32(Int64(attribute.tag)))"
            guard let target = target(of: attribute.tag, internet: internet) else {
                if attribute.tag == code("cdat") || attribute.tag == code("mdat") {
                    report.note("the dates of the dump (cdat, mdat) are not kept: the keychain dates the items it adds")
                } else {
                    report.notKept(shown, in: origin)
                }
                continue
            }
            switch target.type {
            case .string:
                guard let text = String(validating: value, as: UTF8.self) else {
                    if ImportedItem.optionalAttributes.contains(target) {
                        report.notKept("\(shown) that is not UTF-8 text", in: origin)
                        continue
                    }
                    report.skip(origin, "its \(shown) is not UTF-8 text")
                    return nil
                }
                values[target] = .string(text)
            case .bytes:
                values[target] = .bytes(value)
            case .integer:
                // A <uint32> or <sint32>, or the four bytes of a code printed as a <blob> (atyp).
                guard value.count == 4 else {
                    report.skip(origin, "its \(shown) is \(value.count) bytes, not a 32-bit value")
                    return nil
                }
                values[target] = .integer(Int64(value.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }))
            case .boolean:
                guard value.count == 4 else {
                    report.skip(origin, "its \(shown) is \(value.count) bytes, not a 32-bit value")
                    return nil
                }
                values[target] = .boolean(value != [0, 0, 0, 0])
            case .date:
                continue
            }
        }
        return ImportedItem.make(internet ? .internetPassword : .genericPassword, values, secret: data, origin: origin, report: &report)
    }

    /// A certificate from the item's data, or `nil` after reporting why not.
    private static func certificate(_ item: SecurityDumpItem, origin: String, report: inout ImportReport) -> ImportedItem? {
        guard let der = item.data, !der.isEmpty else {
            report.skip(origin, "a certificate without its data: the dump was made without -d")
            return nil
        }
        let label = item.attributes.first { $0.tag == code("labl") }?.value.flatMap { String(validating: $0, as: UTF8.self) }
        do throws(CommandError) {
            let certificate = try ImportCommands.certificate(from: der, label: label)
            let attributes = try keychainCall { () throws(KeychainError) in try certificate.attributes }
            return ImportedItem(attributes: attributes, secret: der, origin: origin)
        } catch {
            report.skip(origin, "its data is not a certificate kcf reads: \(error)")
            return nil
        }
    }

    /// The library attribute an attribute of the dump is imported as, or `nil` when it has none.
    private static func target(of tag: UInt32, internet: Bool) -> KeychainFile.Attribute? {
        switch tag {
        case printName, code("labl"): return .label
        case code("acct"): return .account
        case code("desc"): return .itemDescription
        case code("icmt"): return .comment
        case code("crtr"): return .creator
        case code("type"): return .itemType
        case code("invi"): return .isInvisible
        case code("agrp"): return .accessGroup
        case code("pdmn"): return .accessible
        case code("sync"): return .synchronizable
        case code("nega"): return .isNegative
        case code("svce") where !internet: return .service
        case code("gena") where !internet: return .generic
        case code("srvr") where internet: return .server
        case code("sdmn") where internet: return .securityDomain
        case code("ptcl") where internet: return .protocolType
        case code("atyp") where internet: return .authenticationType
        case code("port") where internet: return .port
        case code("path") where internet: return .path
        default: return nil
        }
    }

    /// The print name, attribute 7 of a keychain record: what Keychain Access shows as the item's name.
    static let printName: UInt32 = 7
    /// The print name of a key record: its attribute 1.
    static let keyPrintName: UInt32 = 1
    /// The classes of keys: CSSM's public, private and symmetric key records, and `keys` as kcf prints them.
    static let keyClasses: Set<UInt32> = [0x0000_000E, 0x0000_000F, 0x0000_0010, code("keys")]
    /// CSSM_DL_DB_RECORD_X509_CERTIFICATE, the class of certificates in a dump.
    static let certificateClass: UInt32 = 0x8000_1000

    /// The value of a four-character code.
    static func code(_ text: StaticString) -> UInt32 {
        text.withUTF8Buffer { $0.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
    }
}
