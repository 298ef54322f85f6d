/// A verified, decoded record entry.
enum DecodedEntry: Sendable {
    case put(id: ItemID, attributes: ItemAttributes, secret: SealedSecret)
    case delete(id: ItemID)
}
