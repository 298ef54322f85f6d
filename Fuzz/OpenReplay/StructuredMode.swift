@testable import KeychainFile

/// Mode (b): the input describes records; ``FuzzFileWriter`` seals them under a key the harness knows, and
/// the file is opened with that key and with the header's one-iteration password.
///
/// Layout (every field is read with ``FuzzInput``, so a short input still decodes):
///
///     u8 flags              bit 0: write a lone entry as a transaction of one
///                           bit 1: after the records, append the rest of the input as a raw tail
///                           bit 2: u16 position, u8 mask follow: flip bits of one byte of the finished file
///                           bit 3: u8 split follows: also open the file cut after record split % (records + 1)
///                                  and catch up with the rest (``RefreshChecks``)
///     records, while input remains (at most 32, or until the tail starts):
///       u8 n                1 + n % 8 entries; n == 0xFF with flag bit 1 ends the records: the tail follows
///       entries, each starting with u8 op:
///         op % 4 == 0 or 1  structured put: u8 item (id from a pool of 8), u8 class, u8 count (% 24), then
///                           per attribute: u8 selector — below the catalogue size, that attribute with its
///                           own type; otherwise u16 tag and u8 type follow — then u8 length and the value.
///                           op bit 2: add valid creationDate and modificationDate when missing.
///                           op bit 3: keep the attributes in the given order (else sorted, repeats dropped).
///         op % 4 == 2       delete: u8 item; op bit 4: u8 length and that many bytes replace the 16-byte id
///         op % 4 == 3       raw put: u16 length and the attributes plaintext as it is
///       after a put: the secret, u8 length (op bit 5: u16 length) and its bytes
enum StructuredMode {
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let flags = input.byte()
        var flip: (position: Int, mask: UInt8)? = nil
        if flags & 4 != 0 { flip = (Int(input.uint16()), input.byte()) }
        let split = flags & 8 != 0 ? Int(input.byte()) : nil
        var writer = FuzzFileWriter()
        var records = 0
        while !input.isAtEnd && records < 32 {
            let count = input.byte()
            if count == 0xFF && flags & 2 != 0 { break }
            var entries: [FuzzFileWriter.Entry] = []
            for _ in 0...(Int(count) % 8) { entries.append(entry(&input)) }
            writer.append(entries, asTransaction: flags & 1 != 0)
            records += 1
        }
        if flags & 2 != 0 { writer.appendRaw(input.rest()) }
        if let flip { writer.flip(at: flip.position, mask: flip.mask) }
        OpenedKeychainChecks<FormatV1Checks>.runSealed(writer.bytes)
        if let split {
            let end = writer.recordEnds[split % writer.recordEnds.count]
            RefreshChecks<FormatV1Checks>.run(from: Array(writer.bytes[..<end]), to: writer.bytes, credential: FuzzCredentials.key)
        }
    }

    static func entry(_ input: inout FuzzInput) -> FuzzFileWriter.Entry {
        let op = input.byte()
        switch op % 4 {
        case 2:
            let id = ItemPlaintext.itemID(input.byte())
            if op & 0x10 != 0 { return .delete(plaintext: input.bytes(Int(input.byte()))) }
            return .delete(plaintext: id.bytes)
        case 3:
            let plaintext = input.bytes(Int(input.uint16()))
            // The secret box is bound to the id the attributes plaintext names, as a writer would bind it.
            let id = ItemPlaintext.itemID(namedBy: plaintext)
            return .put(attributes: plaintext, itemID: id, secret: secret(&input, op))
        default:
            let id = ItemPlaintext.itemID(input.byte())
            let plaintext = ItemPlaintext.attributes(&input, op, id: id)
            return .put(attributes: plaintext, itemID: id, secret: secret(&input, op))
        }
    }

    static func secret(_ input: inout FuzzInput, _ op: UInt8) -> [UInt8] {
        input.bytes(op & 0x20 != 0 ? Int(input.uint16()) : Int(input.byte()))
    }
}
