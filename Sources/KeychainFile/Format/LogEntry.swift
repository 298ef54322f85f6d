/// One operation inside a record.
enum LogEntry: Sendable {
    case put(id: ItemID, attributes: ItemAttributes, secret: PendingSecret)
    case delete(id: ItemID)
}
