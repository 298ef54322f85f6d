/// 1Password's CSV export (1Password 8: File → Export → CSV), which holds logins and passwords.
///
/// The columns, as 1Password 8 writes them: `Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes`,
/// every field quoted. Columns are found by name in any case and order, so older exports with more columns
/// (1Password 7 let the user choose them) read as well, their other columns reported as not imported. Each
/// item becomes an internet password or a generic password (see ``LoginItem``); a Password item, with no
/// address and no user name, is a generic password named by its title. One-time password seeds, favourites,
/// archive flags and tags are reported as not imported; archived items are imported as any other.
enum OnePasswordCSV {
    /// The columns a 1Password export always has.
    static let required = ["Title", "Password"]
    /// The columns read when present.
    static let optional = ["Url", "Username", "Notes", "OTPAuth", "Favorite", "Archived", "Tags"]

    /// Whether `header` is a 1Password export's: a title, a password, and a user name or an address.
    static func matches(header: [String]) -> Bool {
        CSVColumns.header(header, has: required)
            && (CSVColumns.header(header, has: ["Username"]) || CSVColumns.header(header, has: ["Url"]))
    }

    /// The items of `table`.
    ///
    /// - Throws: ``ImportParseError`` when the title or the password column is missing.
    static func items(from table: CSVTable, report: inout ImportReport) throws(ImportParseError) -> [ImportedItem] {
        let columns = try CSVColumns(header: table.header, required: required, optional: optional, format: "1Password CSV export")
        var items: [ImportedItem] = []
        for record in table.records {
            func value(_ name: String) -> String { columns.value(name, in: record) }
            let title = value("Title")
            let origin = ImportReport.origin(line: record.line, name: title)
            columns.reportUnknown(in: record, origin: origin, report: &report)
            let url = value("Url")
            guard let item = LoginItem.make(
                name: title, addresses: url.isEmpty ? [] : [url], addressColumn: "Url", username: value("Username"),
                password: value("Password"), notes: value("Notes"), origin: origin, report: &report)
            else { continue }
            if !value("OTPAuth").isEmpty { report.notKept("OTPAuth (one-time password seeds)", in: origin) }
            if value("Favorite").lowercased() == "true" { report.notKept("Favorite", in: origin) }
            if value("Archived").lowercased() == "true" { report.notKept("Archived (imported as any other item)", in: origin) }
            if !value("Tags").isEmpty { report.notKept("Tags", in: origin) }
            items.append(item)
        }
        return items
    }
}
