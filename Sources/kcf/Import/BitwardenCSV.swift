import Foundation

/// Bitwarden's CSV export (Export vault → File format .csv), of a personal vault or an organisation's.
///
/// The columns, as Bitwarden writes them (its help page "Condition a Bitwarden .csv or .json"):
/// `folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp`,
/// with `collections` in place of `folder` and `favorite` for an organisation; exports before 2022 lack
/// `reprompt`. Only logins and secure notes are exported. A login becomes an internet password or a generic
/// password (see ``LoginItem``); its `login_uri` holds its web addresses separated by commas. A secure note
/// (`type` `note`) becomes a generic password as Apple keeps one, its text the secret. Folders, collections,
/// favourites, custom fields, the re-prompt flag and one-time password seeds have no place in a keychain:
/// every value of them is reported as not imported.
enum BitwardenCSV {
    /// The columns a Bitwarden export always has.
    static let required = ["type", "name", "notes", "login_uri", "login_username", "login_password"]
    /// The columns of some versions or vault kinds.
    static let optional = ["folder", "collections", "favorite", "fields", "reprompt", "login_totp"]

    /// Whether `header` is a Bitwarden export's.
    static func matches(header: [String]) -> Bool {
        CSVColumns.header(header, has: required)
    }

    /// The items of `table`.
    ///
    /// - Throws: ``ImportParseError`` when a column it always has is missing.
    static func items(from table: CSVTable, report: inout ImportReport) throws(ImportParseError) -> [ImportedItem] {
        let columns = try CSVColumns(header: table.header, required: required, optional: optional, format: "Bitwarden CSV export")
        var items: [ImportedItem] = []
        for record in table.records {
            func value(_ name: String) -> String { columns.value(name, in: record) }
            let name = value("name")
            let origin = ImportReport.origin(line: record.line, name: name)
            columns.reportUnknown(in: record, origin: origin, report: &report)
            let item: ImportedItem?
            switch value("type") {
            case "login":
                item = LoginItem.make(
                    name: name, addresses: addresses(value("login_uri")), addressColumn: "login_uri",
                    username: value("login_username"), password: value("login_password"), notes: value("notes"),
                    origin: origin, report: &report)
            case "note":
                item = LoginItem.secureNote(name: name, text: value("notes"), origin: origin, report: &report)
            case "":
                report.skip(origin, "it has no type (Bitwarden's CSV export has logins and notes)")
                item = nil
            case let other:
                report.skip(origin, "its type \"\(other)\" is neither login nor note, the two kinds a Bitwarden CSV export has")
                item = nil
            }
            guard let item else { continue }
            if value("type") == "login" {
                if !value("login_totp").isEmpty { report.notKept("login_totp (one-time password seeds)", in: origin) }
            } else {
                for column in ["login_uri", "login_username", "login_password", "login_totp"] where !value(column).isEmpty {
                    report.notKept("\(column) of a secure note", in: origin)
                }
            }
            if !value("folder").isEmpty { report.notKept("folder", in: origin) }
            if !value("collections").isEmpty { report.notKept("collections", in: origin) }
            if value("favorite") == "1" { report.notKept("favorite", in: origin) }
            if !value("fields").isEmpty { report.notKept("fields (custom fields)", in: origin) }
            if value("reprompt") == "1" { report.notKept("reprompt (ask for the master password again)", in: origin) }
            items.append(item)
        }
        return items
    }

    /// The addresses of a `login_uri` field: Bitwarden writes a login's list of addresses joined by commas.
    static func addresses(_ field: String) -> [String] {
        field.split(separator: ",").map { String($0) }.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    }
}
