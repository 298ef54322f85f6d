/// A live item as the keychain holds it in memory: decrypted attributes, the still-sealed secret.
///
/// 56 bytes and one heap block (``ItemBytes``: the encoded attributes, the secret's chain value and box)
/// per item; ``attributes`` and ``secret`` are views of that block, made without allocating.
struct StoredItem: Sendable {
    let id: ItemID
    /// The attributes and the sealed secret's bytes (Sendable: never written after it is made).
    private nonisolated(unsafe) let bytes: ItemBytes
    /// When the item was first added, counted in records; orders search results deterministically.
    let order: UInt64
    // The secret's fields besides its bytes, and the attributes' class and count.
    private let sequence: UInt64
    private let entryCount: UInt32
    private let entryIndex: UInt32
    private let storedEntryByteCount: UInt32
    private let kind: RecordKind
    private let itemClass: ItemClass
    private let attributeCount: UInt8

    init(id: ItemID, attributes: ItemAttributes, secret: SealedSecret, order: UInt64) {
        self.id = id
        self.order = order
        if attributes.encoded.storage.holds(attributes.encoded, secret) {
            bytes = attributes.encoded.storage
        } else {
            bytes = attributes.encoded.withUnsafeBytes { attributes in
                secret.box.withUnsafeBytes { box in
                    guard secret.hasChain else {
                        return ItemBytes.make(attributes: attributes, chain: UnsafeRawBufferPointer(start: nil, count: 0), box: box)
                    }
                    return secret.box.storage.withBytes { all in
                        ItemBytes.make(
                            attributes: attributes, chain: UnsafeRawBufferPointer(rebasing: all[(secret.box.offset - 16)..<secret.box.offset]),
                            box: box)
                    }
                }
            }
        }
        sequence = secret.sequence
        entryCount = secret.entryCount
        entryIndex = secret.entryIndex
        storedEntryByteCount = UInt32(clamping: secret.entryByteCount)
        kind = secret.kind
        itemClass = attributes.itemClass
        attributeCount = UInt8(truncatingIfNeeded: attributes.count)
    }

    var attributes: ItemAttributes {
        ItemAttributes(itemClass: itemClass, count: Int(attributeCount), encoded: bytes.attributesView)
    }

    /// The file bytes of the put that wrote this item (``SealedSecret/entryByteCount``), without making the
    /// ``secret`` view (a retain and a release) to read it.
    var entryByteCount: Int { Int(storedEntryByteCount) }

    var secret: SealedSecret {
        SealedSecret(
            box: bytes.boxView, hasChain: bytes.layout.hasChain, sequence: sequence, kind: kind, entryCount: entryCount,
            entryIndex: entryIndex, entryByteCount: entryByteCount)
    }

    /// This item with the sealed secret `secret` (its attributes and order unchanged).
    func replacingSecret(with secret: SealedSecret) -> StoredItem {
        StoredItem(id: id, attributes: attributes, secret: secret, order: order)
    }
}
