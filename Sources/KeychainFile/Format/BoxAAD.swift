/// The 78-byte associated data of a record box (SPEC.md §7.2).
struct BoxAAD {
    static let size = 78
    /// Where the previous chain value starts: the last 16 bytes.
    static let previousChainOffset = 62
    /// The entry index (u32) and the previous chain value: what differs between the attributes boxes of one record.
    static let entryIndexRange = 41..<45
    static let previousChainRange = previousChainOffset..<size

    /// Builds the AAD, in an array: what the tests check boxes against. The reader and the record sealer write it
    /// into scratch memory instead (``write(fileID:epoch:sequence:kind:entryCount:entryIndex:role:itemID:previousChain:into:)``,
    /// ``writeWithZeroChain(fileID:epoch:sequence:kind:entryCount:entryIndex:role:itemID:into:)``).
    static func make(
        fileID: [UInt8], epoch: UInt64, sequence: UInt64, kind: RecordKind, entryCount: UInt32, entryIndex: UInt32,
        role: BoxRole, itemID: ItemID?, previousChain: [UInt8]
    ) -> [UInt8] {
        // A previous chain value of another size (none is made) gives associated data of another size, which
        // no box verifies against.
        let count = previousChainOffset + previousChain.count
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let out = UnsafeMutableRawBufferPointer(buffer)
            write(
                fileID: fileID, epoch: epoch, sequence: sequence, kind: kind, entryCount: entryCount, entryIndex: entryIndex, role: role,
                itemID: itemID, into: out)
            previousChain.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[previousChainOffset...]).copyMemory(from: $0) }
            initialized = count
        }
    }

    /// Writes the AAD into `out` (``size`` bytes) with `previousChain` as its previous chain value, without
    /// allocating: what a reader verifies each box with.
    static func write(
        fileID: [UInt8], epoch: UInt64, sequence: UInt64, kind: RecordKind, entryCount: UInt32, entryIndex: UInt32,
        role: BoxRole, itemID: ItemID?, previousChain: ChainValue, into out: UnsafeMutableRawBufferPointer
    ) {
        precondition(out.count == size, "a box's associated data is \(size) bytes")
        write(
            fileID: fileID, epoch: epoch, sequence: sequence, kind: kind, entryCount: entryCount, entryIndex: entryIndex, role: role,
            itemID: itemID, into: out)
        previousChain.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[previousChainOffset...]).copyMemory(from: $0) }
    }

    /// Writes the AAD into `out` (``size`` bytes) with a zero previous chain value: what the record sealer
    /// seals with before the value is known (see ``RecordSealer``), without allocating.
    static func writeWithZeroChain(
        fileID: [UInt8], epoch: UInt64, sequence: UInt64, kind: RecordKind, entryCount: UInt32, entryIndex: UInt32,
        role: BoxRole, itemID: ItemID?, into out: UnsafeMutableRawBufferPointer
    ) {
        write(
            fileID: fileID, epoch: epoch, sequence: sequence, kind: kind, entryCount: entryCount, entryIndex: entryIndex, role: role,
            itemID: itemID, into: out)
        UnsafeMutableRawBufferPointer(rebasing: out[previousChainOffset...]).initializeMemory(as: UInt8.self, repeating: 0)
    }

    /// Writes every field but the previous chain value (big-endian integers, SPEC.md §7.2).
    private static func write(
        fileID: [UInt8], epoch: UInt64, sequence: UInt64, kind: RecordKind, entryCount: UInt32, entryIndex: UInt32,
        role: BoxRole, itemID: ItemID?, into out: UnsafeMutableRawBufferPointer
    ) {
        precondition(out.count >= previousChainOffset && fileID.count == 16, "a box's associated data")
        let base = out.baseAddress!
        Format.aadPrefix.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: 4) }
        fileID.withUnsafeBytes { (base + 4).copyMemory(from: $0.baseAddress!, byteCount: 16) }
        base.storeBytes(of: epoch.bigEndian, toByteOffset: 20, as: UInt64.self)
        base.storeBytes(of: sequence.bigEndian, toByteOffset: 28, as: UInt64.self)
        base.storeBytes(of: kind.rawValue, toByteOffset: 36, as: UInt8.self)
        base.storeBytes(of: entryCount.bigEndian, toByteOffset: 37, as: UInt32.self)
        base.storeBytes(of: entryIndex.bigEndian, toByteOffset: 41, as: UInt32.self)
        base.storeBytes(of: role.rawValue, toByteOffset: 45, as: UInt8.self)
        if let itemID {
            itemID.withUnsafeBytes { (base + 46).copyMemory(from: $0.baseAddress!, byteCount: 16) }
        } else {
            (base + 46).initializeMemory(as: UInt8.self, repeating: 0, count: 16)
        }
    }
}
