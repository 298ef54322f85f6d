import Foundation

/// The entries of a KDBX document (`<KeePassFile><Meta>…</Meta><Root><Group>…`), read from ``KDBXReader``'s
/// XML: every entry of every group in document order, with its group path and whether it is in the recycle bin.
/// History entries (`<History><Entry>`) are counted on their entry, not listed.
struct KDBXDatabase {
    /// The entries, in document order.
    let entries: [KDBXEntry]

    /// The entries of `document`.
    ///
    /// - Throws: ``KDBXError/damaged(_:)`` when it has no `<Root>` with a group.
    init(_ document: XMLTreeElement) throws(KDBXError) {
        guard let root = document.child("Root") else { throw .damaged("the XML has no <Root>") }
        let meta = document.child("Meta")
        let binEnabled = meta?.child("RecycleBinEnabled")?.text.lowercased() != "false"
        let binUUID = binEnabled ? meta?.child("RecycleBinUUID")?.text.trimmingCharacters(in: .whitespaces) : nil
        var entries: [KDBXEntry] = []
        // An explicit stack: a group, its path, whether it is inside the bin. The top group's name is not part
        // of paths (KeePass names it after the database).
        var pending: [(group: XMLTreeElement, path: String, recycled: Bool)] = root.children("Group").reversed().map { ($0, "", false) }
        var isTop = true
        while let (group, path, inBin) = pending.popLast() {
            let uuid = group.child("UUID")?.text
            let recycled = inBin || (binUUID != nil && !binUUID!.isEmpty && uuid == binUUID && !Self.isZeroUUID(uuid ?? ""))
            let name = group.child("Name")?.text ?? ""
            let here = isTop ? "" : (path.isEmpty ? name : path + "/" + name)
            isTop = false
            for entry in group.children("Entry") {
                entries.append(Self.entry(entry, group: here, recycled: recycled, number: entries.count + 1))
            }
            for child in group.children("Group").reversed() { pending.append((child, here, recycled)) }
        }
        self.entries = entries
    }

    private static func isZeroUUID(_ text: String) -> Bool {
        text == "AAAAAAAAAAAAAAAAAAAAAA=="
    }

    private static func entry(_ element: XMLTreeElement, group: String, recycled: Bool, number: Int) -> KDBXEntry {
        let strings = element.children("String").map { (key: $0.child("Key")?.text ?? "", value: $0.child("Value")?.text ?? "") }
        let attachments = element.children("Binary").map { $0.child("Key")?.text ?? "" }
        let history = element.child("History")?.children("Entry").count ?? 0
        let expires = element.child("Times")?.child("Expires")?.text.lowercased() == "true"
        return KDBXEntry(group: group, strings: strings, attachments: attachments, historyCount: history, expires: expires,
                         recycled: recycled, number: number)
    }
}
