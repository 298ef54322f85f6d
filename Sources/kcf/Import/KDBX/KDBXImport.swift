/// The keychain items of a KeePass database's entries.
///
/// Each entry becomes a login (see ``LoginItem``): its title, user name, password, URL and notes; its name is
/// its group path and title (`Web/Mail/GitHub`; the title alone in the top group), so that entries with one
/// title in different groups stay apart. Entries in the recycle bin are skipped and history (earlier versions of
/// an entry) is not imported, both reported. What a keychain has no place for is reported by name: custom
/// fields, one-time password seeds, attachments and expiry times.
enum KDBXImport {
    /// The string keys under which KeePass and KeePassXC keep one-time password seeds.
    static let otpKeys: Set<String> = [
        "otp", "TOTP Seed", "TOTP Settings", "TimeOtp-Secret", "TimeOtp-Secret-Hex", "TimeOtp-Secret-Base32",
        "TimeOtp-Secret-Base64", "TimeOtp-Length", "TimeOtp-Period", "TimeOtp-Algorithm", "HmacOtp-Secret",
        "HmacOtp-Secret-Hex", "HmacOtp-Secret-Base32", "HmacOtp-Secret-Base64", "HmacOtp-Counter",
    ]

    /// The items of `database`, with what was skipped or not kept in `report`.
    static func items(from database: KDBXDatabase, report: inout ImportReport) -> [ImportedItem] {
        var items: [ImportedItem] = []
        for entry in database.entries {
            let title = entry.string("Title")
            let name = entry.group.isEmpty ? title : entry.group + "/" + title
            let origin = "entry \(entry.number) (\(ImportReport.quoted(name)))"
            if entry.recycled {
                report.skip(origin, "it is in the recycle bin")
                continue
            }
            let url = entry.string("URL")
            guard let item = LoginItem.make(
                name: name, addresses: url.isEmpty ? [] : [url], addressColumn: "URL", username: entry.string("UserName"),
                password: entry.string("Password"), notes: entry.string("Notes"), origin: origin, report: &report)
            else { continue }
            for key in entry.customKeys {
                if otpKeys.contains(key) {
                    report.notKept("one-time password seeds (string field \(ImportReport.quoted(key)))", in: origin)
                } else {
                    report.notKept("custom field \(ImportReport.quoted(key))", in: origin)
                }
            }
            for attachment in entry.attachments { report.notKept("attachment \(ImportReport.quoted(attachment))", in: origin) }
            if entry.historyCount > 0 { report.notKept("history (earlier versions of the entry)", in: origin) }
            if entry.expires { report.notKept("expiry time", in: origin) }
            items.append(item)
        }
        return items
    }
}
