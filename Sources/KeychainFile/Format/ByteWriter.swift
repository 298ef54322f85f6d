/// Appends big-endian integers and bytes to a growing array.
struct ByteWriter {
    private(set) var bytes: [UInt8]

    init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// A writer that continues after `bytes`.
    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    var count: Int { bytes.count }

    mutating func writeUInt8(_ value: UInt8) { bytes.append(value) }

    mutating func writeUInt16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    mutating func writeUInt32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func writeUInt64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func writeBytes<Bytes: Sequence>(_ values: Bytes) where Bytes.Element == UInt8 {
        bytes.append(contentsOf: values)
    }

    /// Forgets the bytes written, keeping the storage if no copy of `bytes` shares it.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// Overwrites a u32 written earlier at `offset` (for lengths known only afterwards).
    mutating func setUInt32(_ value: UInt32, at offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> UInt32(24 - 8 * index)) }
    }
}
