/// One entry of a KeePass database, as the import needs it: its strings, the names of its attachments, how
/// many earlier versions (history) it has, whether it expires, and where it is.
struct KDBXEntry: Equatable {
    /// The group path from below the root, "/"-separated ("" for the root group).
    let group: String
    /// Its strings by key (Title, UserName, Password, URL, Notes, and custom fields), values revealed.
    let strings: [(key: String, value: String)]
    /// The names of its attachments.
    let attachments: [String]
    /// How many earlier versions it keeps.
    let historyCount: Int
    /// Whether it has an expiry time that is in force.
    let expires: Bool
    /// Whether it is in the recycle bin (or a group below it).
    let recycled: Bool
    /// Its place in the document, for messages: 1 for the first entry.
    let number: Int

    /// The standard fields of KeePass.
    static let standardKeys: Set<String> = ["Title", "UserName", "Password", "URL", "Notes"]

    /// The value of the string `key`, or "".
    func string(_ key: String) -> String {
        strings.first { $0.key == key }?.value ?? ""
    }

    /// The keys of the strings that are not standard fields, in order.
    var customKeys: [String] {
        strings.map(\.key).filter { !Self.standardKeys.contains($0) }
    }

    static func == (lhs: KDBXEntry, rhs: KDBXEntry) -> Bool {
        lhs.group == rhs.group && lhs.strings.map(\.key) == rhs.strings.map(\.key) && lhs.strings.map(\.value) == rhs.strings.map(\.value)
            && lhs.attachments == rhs.attachments && lhs.historyCount == rhs.historyCount && lhs.expires == rhs.expires
            && lhs.recycled == rhs.recycled && lhs.number == rhs.number
    }
}
