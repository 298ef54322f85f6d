// The common case of ``AttributeCoding/check(_:)`` in one tight pass: a valid plaintext is accepted with a
// few instructions an attribute, and anything the pass is not sure of — every invalid plaintext among it — is
// left to the full check, which finds the same result or the error to report, with its offset and message.
//
// Why: opening a keychain checks every attribute of every item (eleven an item in the benchmark's keychain, over
// a million at each open of 100,000 items), and the full check, which carries what it needs for its messages,
// took about 200 instructions an attribute.

extension AttributeCoding {
    /// ``check(_:)``'s result for `bytes` when it is a valid plaintext; `nil` when it may not be (the caller then
    /// runs ``fullCheck(_:)``, which reports what is wrong). Never accepts a plaintext ``fullCheck(_:)`` rejects.
    static func quickCheck(_ bytes: UnsafeRawBufferPointer) -> (id: ItemID, itemClass: ItemClass, count: Int)? {
        guard let base = bytes.baseAddress, bytes.count >= headerByteCount, bytes[0] == version,
            let itemClass = ItemClass(rawValue: bytes[17])
        else { return nil }
        let count = Int(UInt16(bigEndian: base.loadUnaligned(fromByteOffset: 18, as: UInt16.self)))
        guard count >= minimumCount, count <= ItemAttributes.maximumCount else { return nil }
        let classBit = UInt16(Attribute.bit(for: itemClass)) << 4
        // Each tag's type, classes and integer range, packed (``AttributeShape/Table/compact``).
        let table = AttributeShape.table
        let creationDate = Attribute.creationDate.tag, modificationDate = Attribute.modificationDate.tag
        let total = bytes.count
        var offset = headerByteCount
        var previous = -1
        var dates = 0
        let accepted: Bool = table.compact.withUnsafeBufferPointer { entries in
            for _ in 0..<count {
                guard total - offset >= attributeHeaderByteCount else { return false }
                let tag = UInt16(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
                guard Int(tag) > previous, let slot = table.slot(ofTag: tag) else { return false }
                let entry = entries[slot]
                let type = UInt8(truncatingIfNeeded: entry >> 1) & 7
                guard entry & 1 != 0, entry & classBit != 0, base.load(fromByteOffset: offset + 2, as: UInt8.self) == type else {
                    return false
                }
                let length = Int(UInt32(bigEndian: base.loadUnaligned(fromByteOffset: offset + 3, as: UInt32.self)))
                let value = offset + attributeHeaderByteCount
                guard length <= total - value else { return false }
                switch AttributeType(rawValue: type) {
                case .string?:
                    guard length <= ItemAttributes.maximumValueByteCount,
                        isValidUTF8(UnsafeRawBufferPointer(start: base + value, count: length))
                    else { return false }
                case .bytes?:
                    guard length <= ItemAttributes.maximumValueByteCount else { return false }
                case .boolean?:
                    guard length == 1, base.load(fromByteOffset: value, as: UInt8.self) <= 1 else { return false }
                case .integer?:
                    guard length == 8 else { return false }
                    let range = Int(entry >> 8)
                    if range > 0 {
                        let number = Int64(bigEndian: base.loadUnaligned(fromByteOffset: value, as: Int64.self))
                        guard table.integerRanges[range - 1].contains(number) else { return false }
                    }
                case .date?:
                    guard length == 8 else { return false }
                    if tag == creationDate { dates |= 1 }
                    if tag == modificationDate { dates |= 2 }
                case nil:
                    return false
                }
                previous = Int(tag)
                offset = value + length
            }
            return offset == total && dates == 3
        }
        guard accepted else { return nil }
        return (ItemID(uncheckedPrefixOf: UnsafeRawBufferPointer(rebasing: bytes[1...])), itemClass, count)
    }
}
