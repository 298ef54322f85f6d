/// KDBX 4's VariantDictionary: typed values by name, as the KDF parameters are stored (version 1.0: a 2-byte
/// version, then items of type byte, name, value, ended by type 0).
struct KDBXVariantDictionary: Equatable {
    /// A value of one of the dictionary's types.
    enum Value: Equatable {
        case uint32(UInt32), uint64(UInt64), bool(Bool), int32(Int32), int64(Int64), string(String), bytes([UInt8])
    }

    /// The values by name.
    private(set) var values: [String: Value] = [:]

    /// The dictionary in `bytes`.
    ///
    /// - Throws: ``KDBXError/damaged(_:)`` for a malformed dictionary (a size that does not fit its type, a name
    ///   given twice, bytes after its end); ``KDBXError/unsupportedVersion(_:)`` for a newer major version.
    init(_ bytes: [UInt8]) throws(KDBXError) {
        var reader = KDBXByteReader(bytes)
        let version = try reader.uint16("the KDF parameters' version")
        guard version & 0xff00 <= 0x0100 else {
            throw .unsupportedVersion("the KDF parameters have version \(version >> 8).\(version & 0xff), newer than kcf reads (1.0)")
        }
        while true {
            let type = try reader.uint8("a KDF parameter's type")
            if type == 0 { break }
            let nameLength = Int(try reader.uint32("a KDF parameter's name length"))
            let nameBytes = try reader.take(nameLength, "a KDF parameter's name")
            guard let name = String(validating: nameBytes, as: UTF8.self) else { throw .damaged("a KDF parameter's name is not UTF-8") }
            let valueLength = Int(try reader.uint32("the KDF parameter \(name)'s size"))
            let data = try reader.take(valueLength, "the KDF parameter \(name)")
            func sized(_ count: Int) throws(KDBXError) {
                guard data.count == count else { throw .damaged("the KDF parameter \(name) is \(data.count) bytes, not \(count)") }
            }
            let value: Value
            switch type {
            case 0x04: try sized(4); value = .uint32(UInt32(KDBXByteReader.littleEndian(data)))
            case 0x05: try sized(8); value = .uint64(KDBXByteReader.littleEndian(data))
            case 0x08: try sized(1); value = .bool(data[0] != 0)
            case 0x0C: try sized(4); value = .int32(Int32(bitPattern: UInt32(KDBXByteReader.littleEndian(data))))
            case 0x0D: try sized(8); value = .int64(Int64(bitPattern: KDBXByteReader.littleEndian(data)))
            case 0x18:
                guard let text = String(validating: data, as: UTF8.self) else { throw .damaged("the KDF parameter \(name) is not UTF-8") }
                value = .string(text)
            case 0x42: value = .bytes(data)
            default: throw .damaged("the KDF parameter \(name) has the unknown type \(type)")
            }
            guard values[name] == nil else { throw .damaged("the KDF parameter \(name) is given twice") }
            values[name] = value
        }
        guard reader.isAtEnd else { throw .damaged("\(reader.remaining) bytes follow the KDF parameters") }
    }

    /// The value named `name`.
    subscript(name: String) -> Value? { values[name] }

    /// The unsigned number named `name` (of type UInt32 or UInt64).
    func unsigned(_ name: String) -> UInt64? {
        switch values[name] {
        case .uint32(let value)?: return UInt64(value)
        case .uint64(let value)?: return value
        default: return nil
        }
    }

    /// The bytes named `name`.
    func bytes(_ name: String) -> [UInt8]? {
        if case .bytes(let value)? = values[name] { return value }
        return nil
    }
}
