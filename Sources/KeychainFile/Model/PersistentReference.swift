/// A reference to one item that stays valid across updates and reopenings of the keychain, like Apple's
/// `kSecValuePersistentRef`: 21 bytes, `"KCFR"` ‖ `0x01` ‖ the 16-byte item id.
///
/// Store the bytes anywhere (they are not secret, but they do reveal the item id) and turn them back into
/// a reference to find the item again with a ``Query``.
///
/// For example:
/// ```swift
/// let reference = PersistentReference(itemID: id)
/// let saved = reference.bytes                     // 21 bytes
/// let restored = try PersistentReference(bytes: saved)
/// assert(restored.itemID == id)
/// ```
public struct PersistentReference: Hashable, Sendable {
    /// The number of bytes of a persistent reference.
    public static let byteCount = 21
    /// The five bytes every reference starts with: "KCFR" and format 1.
    static let prefix: [UInt8] = [0x4b, 0x43, 0x46, 0x52, 0x01]

    /// The item the reference points to.
    public var itemID: ItemID

    /// Creates a reference to the item with `itemID`.
    ///
    /// - Parameter itemID: The item's id.
    public init(itemID: ItemID) {
        self.itemID = itemID
    }

    /// Reads a reference from the bytes of ``bytes``.
    ///
    /// For example:
    /// ```swift
    /// let reference = try PersistentReference(bytes: savedBytes)
    /// ```
    ///
    /// - Parameter bytes: Exactly 21 bytes: `"KCFR"`, `0x01`, then the item id.
    /// - Throws: `KeychainError.invalidParameter` when the length is not 21 or the first five bytes differ.
    public init(bytes: some Sequence<UInt8>) throws(KeychainError) {
        let all = Array(bytes)
        guard all.count == Self.byteCount else {
            throw .invalidParameter("persistent reference: \(all.count) bytes, expected \(Self.byteCount)")
        }
        guard all.prefix(Self.prefix.count).elementsEqual(Self.prefix) else {
            throw .invalidParameter("persistent reference: does not start with \"KCFR\" and format 1")
        }
        self.itemID = try ItemID(bytes: all.dropFirst(Self.prefix.count))
    }

    /// The 21 bytes of the reference.
    public var bytes: [UInt8] {
        var out = Self.prefix
        out.reserveCapacity(Self.byteCount)
        itemID.withUnsafeBytes { out.append(contentsOf: $0) }
        return out
    }
}
