/// A grant in a version 3 key slot (Docs/FormatVersion3.md §2.2): keys that a root holder sealed to the slot's
/// public key `P` when it rotated them without the slot's credential. In the slot: the ephemeral public key
/// `E = X25519(e, 9)` (32) ‖ the sealed key set (``SlotBoxV3``).
struct SlotGrantV3: Sendable, Equatable {
    let ephemeralPublicKey: [UInt8]
    let box: SlotBoxV3

    var byteCount: Int { 32 + box.byteCount }

    func encode(into writer: inout ByteWriter) {
        writer.writeBytes(ephemeralPublicKey)
        box.encode(into: &writer)
    }

    static func parse(_ reader: inout ByteReader, number: Int) throws(ByteReader.Underflow) -> SlotGrantV3 {
        let ephemeral = try reader.readBytes(32, "grant \(number)'s ephemeral key")
        return SlotGrantV3(ephemeralPublicKey: ephemeral, box: try SlotBoxV3.parse(&reader, "grant \(number)'s"))
    }
}
