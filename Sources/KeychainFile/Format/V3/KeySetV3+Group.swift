@_spi(KeychainFileInternals) import KeychainCrypto

extension KeySetV3 {
    /// One access group's key id, name and key (Docs/FormatVersion3.md §2.2, §2.4): as a scoped slot holds it in its
    /// ``KeySetV3``, and as the header's ``KeyTableV3`` lists it. Both lists encode a group in the same bytes, with
    /// this one codec; each checks its own rules for key ids, keys and names (``KeySetV3/validate(fileID:)``,
    /// ``KeyTableV3/validate()``).
    ///
    /// Encoded, big-endian: key id u8 ‖ group key (32) ‖ name length u8 ‖ name (UTF-8).
    ///
    /// ```swift
    /// var writer = ByteWriter()
    /// group.encode(into: &writer)
    /// var reader = ByteReader(writer.bytes)
    /// let again = try KeySetV3.Group.decode(from: &reader, keysIn: writer.bytes, fieldNames: ("key id", "name length", "name"))
    /// ```
    struct Group: Sendable {
        let keyID: UInt8
        let name: String
        let key: SymmetricKey

        /// The names of a group's fields that the bytes can end inside, as an underflow names them; the group key
        /// is "group key" in every list.
        typealias FieldNames = (keyID: String, nameLength: String, name: String)

        /// How many bytes ``encode(into:)`` writes.
        var encodedCount: Int { 34 + name.utf8.count }

        /// Appends the group's bytes. The key must be 32 bytes and the name at most 255 (the lists' `validate`
        /// checks both first): the length byte is the name's length as it is. The bytes hold the key: the caller
        /// wipes them.
        func encode(into writer: inout ByteWriter) {
            writer.writeUInt8(keyID)
            key.withUnsafeBytes { writer.writeBytes($0) }
            writer.writeUInt8(UInt8(name.utf8.count))
            writer.writeBytes(name.utf8)
        }

        /// Reads one group from `reader`, which reads `bytes`, and advances it past the group. The key is made from
        /// a slice of `bytes`, which the caller wipes: no other copy is left behind.
        ///
        /// - Parameters:
        ///   - reader: positioned at the group's key id.
        ///   - bytes: the array `reader` reads (its ranges index it).
        ///   - fieldNames: what an underflow calls the key id, the name length and the name in this list.
        /// - Throws: `ByteReader.Underflow` naming the field the bytes end inside; `SlotProblemV3` when the name is
        ///   not UTF-8. The caller says in which list.
        static func decode(from reader: inout ByteReader, keysIn bytes: [UInt8], fieldNames: FieldNames) throws -> Group {
            let keyID = try reader.readUInt8(fieldNames.keyID)
            let key = SymmetricKey(data: bytes[try reader.readRange(32, "group key")])
            let nameBytes = try reader.readBytes(Int(try reader.readUInt8(fieldNames.nameLength)), fieldNames.name)
            guard let name = String(validating: nameBytes, as: UTF8.self) else { throw SlotProblemV3("group \(keyID)'s name is not UTF-8") }
            return Group(keyID: keyID, name: name, key: key)
        }
    }
}
