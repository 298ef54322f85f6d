/// A put's plaintext secret until its record is sealed.
enum PendingSecret: Sendable {
    /// The bytes, in an array of their own.
    case bytes([UInt8])
    /// `count` bytes kept in the reserved ``ItemBytes`` block that holds the put's attributes, where the
    /// ciphertext will go (see ``ItemBytes/makeReserved(attributes:secret:)``): how a batch keeps the secrets
    /// of the items it adds, so that a batch of many items holds no array per secret besides the blocks.
    case inReservedBlock(count: Int)

    /// The secret's size in bytes.
    var count: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .inReservedBlock(let count): count
        }
    }

    /// A copy of the plaintext; `attributes` are the put's (whose block holds it, for ``inReservedBlock(count:)``).
    func plaintext(attributes: ItemAttributes) -> [UInt8] {
        switch self {
        case .bytes(let bytes): bytes
        case .inReservedBlock: attributes.encoded.storage.reservedSecret()
        }
    }
}
