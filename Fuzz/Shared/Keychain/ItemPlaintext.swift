@testable import KeychainFile

/// The items of both open targets' structured inputs: their ids, and attributes plaintexts (SPEC.md §7.3) read
/// from the fuzzer's bytes, which the targets seal as their formats do.
enum ItemPlaintext {
    /// The item ids the fuzzer picks from: few, so that puts and deletions meet the same items.
    static func itemID(_ selector: UInt8) -> ItemID {
        ItemID(high: 0x1D00_0000_0000_0000 | UInt64(selector % 8), low: 0xF022)
    }

    /// The id a raw attributes plaintext names (its bytes 1–16), to bind the secret box to as a writer would;
    /// the pool's first id if the plaintext is too short or names none.
    static func itemID(namedBy plaintext: [UInt8]) -> ItemID {
        plaintext.count >= 17 ? (try? ItemID(bytes: plaintext[1..<17])) ?? itemID(0) : itemID(0)
    }

    /// An attributes plaintext with fuzzer-chosen class, tags, types and values: u8 class, u8 count (% 24), then
    /// per attribute u8 selector — below the catalogue size, that attribute with its own type; otherwise u16 tag
    /// and u8 type follow — then u8 length and the value. `op` bit 2: valid creationDate and modificationDate
    /// are added when missing; bit 3: the attributes stay in the given order (else sorted, repeats dropped).
    static func attributes(_ input: inout FuzzInput, _ op: UInt8, id: ItemID) -> [UInt8] {
        let itemClass = input.byte()
        var attributes: [(tag: UInt16, type: UInt8, value: [UInt8])] = []
        for _ in 0..<(Int(input.byte()) % 24) {
            let selector = Int(input.byte())
            let tag: UInt16
            let type: UInt8
            if selector < Attribute.all.count {
                tag = Attribute.all[selector].tag
                type = Attribute.all[selector].type.rawValue
            } else {
                tag = input.uint16()
                type = input.byte()
            }
            attributes.append((tag, type, input.bytes(Int(input.byte()))))
        }
        if op & 4 != 0 {
            for date in [Attribute.creationDate, .modificationDate] where !attributes.contains(where: { $0.tag == date.tag }) {
                attributes.append((date.tag, date.type.rawValue, [0, 0, 1, 0x9B, 0x6D, 0x2E, 0x7C, 0x00]))
            }
        }
        if op & 8 == 0 {
            var seen = Set<UInt16>()
            attributes = attributes.sorted { $0.tag < $1.tag }.filter { seen.insert($0.tag).inserted }
        }
        var plaintext: [UInt8] = [AttributeCoding.version] + id.bytes + [itemClass]
        plaintext += [UInt8(attributes.count >> 8), UInt8(attributes.count & 0xFF)]
        for attribute in attributes {
            let length = UInt32(attribute.value.count)
            plaintext += [UInt8(attribute.tag >> 8), UInt8(attribute.tag & 0xFF), attribute.type]
            plaintext += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            plaintext += attribute.value
        }
        return plaintext
    }
}
