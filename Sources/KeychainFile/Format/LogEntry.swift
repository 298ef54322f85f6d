/// One operation inside a record.
enum LogEntry: Sendable {
    case put(id: ItemID, attributes: ItemAttributes, secret: PendingSecret)
    case delete(id: ItemID)
    /// A merge's deletion of a live item at the time another copy deleted it (versions 2 and 3; SPEC.md §43.6).
    case deletion(id: ItemID, time: Int64)
    /// A merge's record of another copy's deletion of an id this keychain does not hold: a tombstone entry, which
    /// changes no item (versions 2 and 3; SPEC.md §24.4).
    case tombstone(id: ItemID, time: Int64)
}
