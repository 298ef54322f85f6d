import KeychainCrypto

/// One version of an item as a merge compares it (SPEC.md §43.2): the item's id, class, attributes and secret,
/// with its modification time and a digest of all of them.
///
/// Two versions are the same version exactly when their digests are equal. Versions of one item are ordered
/// by time, then by digest (compared as unsigned bytes), so that every copy that merges the same versions picks
/// the same one, whichever side it holds.
struct MergeVersion: Sendable {
    let id: ItemID
    let attributes: ItemAttributes
    let secret: [UInt8]
    /// The item's modificationDate in milliseconds since 1970-01-01 UTC; its creationDate when it has none, else 0.
    let time: Int64
    /// SHA-256 of `"KeychainFile merge version" ‖ u16 class ‖ u32 n ‖ attributes ‖ u32 s ‖ secret`.
    let digest: [UInt8]

    init(id: ItemID, attributes: ItemAttributes, secret: [UInt8]) {
        self.id = id
        self.attributes = attributes
        self.secret = secret
        time = Self.time(of: attributes)
        digest = Self.digest(attributes: attributes, secret: secret)
    }

    /// Whether this version is ordered before `other`: older, or as old with the smaller digest.
    func precedes(_ other: MergeVersion) -> Bool {
        time != other.time ? time < other.time : digest.lexicographicallyPrecedes(other.digest)
    }

    /// Whether `other` holds exactly this version of the same item.
    func isSame(as other: MergeVersion) -> Bool {
        id == other.id && digest == other.digest
    }

    /// The digest of a version's content (SPEC.md §43.2); the id is not part of it.
    static func digest(attributes: ItemAttributes, secret: [UInt8]) -> [UInt8] {
        var hash = SHA256()
        let label = Array("KeychainFile merge version".utf8)
        label.withUnsafeBytes { hash.update(bufferPointer: $0) }
        var header: [UInt8] = []
        let code = UInt16(attributes.itemClass.rawValue)
        header.append(UInt8(code >> 8))
        header.append(UInt8(code & 0xff))
        appendLength(attributes.encoded.count, to: &header)
        header.withUnsafeBytes { hash.update(bufferPointer: $0) }
        attributes.encoded.withUnsafeBytes { hash.update(bufferPointer: $0) }
        var length: [UInt8] = []
        appendLength(secret.count, to: &length)
        length.withUnsafeBytes { hash.update(bufferPointer: $0) }
        secret.withUnsafeBytes { hash.update(bufferPointer: $0) }
        return Array(hash.finalize())
    }

    private static func appendLength(_ count: Int, to bytes: inout [UInt8]) {
        let value = UInt32(count)
        bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff), UInt8(value & 0xff)]
    }

    private static func time(of attributes: ItemAttributes) -> Int64 {
        if case .date(let milliseconds)? = attributes.stored(Attribute.modificationDate.tag) { return milliseconds }
        if case .date(let milliseconds)? = attributes.stored(Attribute.creationDate.tag) { return milliseconds }
        return 0
    }
}
