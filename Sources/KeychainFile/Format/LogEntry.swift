/// One operation inside a record.
enum LogEntry: Sendable {
    case put(id: ItemID, attributes: ItemAttributes, secret: PendingSecret)
    case delete(id: ItemID)
    /// A merge's deletion of a live item at the time another copy deleted it (versions 2 and 3; SPEC.md §43.6).
    case deletion(id: ItemID, time: Int64)
    /// A merge's record of a deletion time for an id (another copy's deletion of an id this keychain does not hold,
    /// or the tombstone of an item a merge brought back): a tombstone entry, which changes no item (versions 2 and 3;
    /// SPEC.md §24.4). `group`: the access group whose page holds it in version 3, when the id is not live (nil: the
    /// group of its last deletion here, else the default group).
    case tombstone(id: ItemID, time: Int64, group: String?)
}
