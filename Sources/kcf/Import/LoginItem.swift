import KeychainFile

/// The keychain item for a login of a password manager's export, the same for every format:
///
/// - with a web address, an internet password: server, protocol, port and path from the address (see
///   ``WebAddress``), the user name as its account;
/// - without one (or with one that cannot be an internet password's key, reported), a generic password whose
///   service is the login's name and whose account is the user name;
/// - either way labelled with the name, the notes as its comment (`icmt`), the password as its secret.
enum LoginItem {
    /// The item for one login, or `nil` after reporting why there is none.
    ///
    /// - Parameters:
    ///   - name: The login's name (title).
    ///   - addresses: Its web addresses, the first used (the others are reported as not kept).
    ///   - addressColumn: How the addresses' column is named in the report.
    ///   - username: The user name.
    ///   - password: The password.
    ///   - notes: Its notes (empty for none).
    ///   - origin: Where it is in the input.
    static func make(
        name: String, addresses: [String], addressColumn: String, username: String, password: String, notes: String,
        origin: String, report: inout ImportReport
    ) -> ImportedItem? {
        var values: [Attribute: AttributeValue] = [.account: .string(username)]
        if !name.isEmpty { values[.label] = .string(name) }
        if !notes.isEmpty { values[.comment] = .string(notes) }
        let itemClass: ItemClass
        if let first = addresses.first, let address = usable(first, column: addressColumn, origin: origin, report: &report) {
            itemClass = .internetPassword
            values.merge(address.attributes) { $1 }
            for part in address.dropped { report.notKept("\(part) (of the address in \(addressColumn))", in: origin) }
        } else {
            itemClass = .genericPassword
            values[.service] = .string(name)
        }
        if addresses.count > 1 {
            report.notKept("web addresses after the first (in \(addressColumn))", in: origin)
        }
        return ImportedItem.make(itemClass, values, secret: Array(password.utf8), origin: origin, report: &report)
    }

    /// The address as an internet password's key, or `nil` after reporting why it cannot be one.
    private static func usable(_ text: String, column: String, origin: String, report: inout ImportReport) -> WebAddress? {
        do throws(WebAddress.Unusable) {
            return try WebAddress(text)
        } catch {
            let why: String
            switch error {
            case .noServer: why = "have no server"
            case .unknownScheme(let scheme): why = "have the scheme \"\(scheme)\", not an internet protocol"
            case .badPort: why = "have a port outside 1…65535"
            }
            report.notKept("web addresses that \(why) (in \(column); stored as a generic password)", in: origin)
            return nil
        }
    }

    /// A secure note: a generic password as Apple's keychain keeps one (`desc` "secure note", `type` `note`),
    /// whose service and label are the note's name and whose secret is its text.
    static func secureNote(name: String, text: String, origin: String, report: inout ImportReport) -> ImportedItem? {
        var values: [Attribute: AttributeValue] = [
            .service: .string(name), .account: .string(""), .itemDescription: .string("secure note"),
            .itemType: .integer(Int64(noteTypeCode)),
        ]
        if !name.isEmpty { values[.label] = .string(name) }
        return ImportedItem.make(.genericPassword, values, secret: Array(text.utf8), origin: origin, report: &report)
    }

    /// `note`, the type code of Apple's secure notes.
    static let noteTypeCode: UInt32 = 0x6E6F_7465
}
