@_spi(KeychainFileInternals) import KeychainCrypto

/// An AES-256-GCM box in a version 3 key slot (an anchor, or a grant's keys): nonce (12) ‖ ciphertext length u16 ‖
/// ciphertext ‖ tag (16), big-endian.
struct SlotBoxV3: Sendable, Equatable {
    let nonce: [UInt8]
    let ciphertext: [UInt8]
    let tag: [UInt8]

    /// Its length in the slot.
    var byteCount: Int { 12 + 2 + ciphertext.count + 16 }

    func encode(into writer: inout ByteWriter) {
        writer.writeBytes(nonce)
        writer.writeUInt16(UInt16(ciphertext.count))
        writer.writeBytes(ciphertext)
        writer.writeBytes(tag)
    }

    static func parse(_ reader: inout ByteReader, _ what: String) throws(ByteReader.Underflow) -> SlotBoxV3 {
        let nonce = try reader.readBytes(12, "\(what) nonce")
        let count = Int(try reader.readUInt16("\(what) length"))
        return SlotBoxV3(nonce: nonce, ciphertext: try reader.readBytes(count, "\(what) ciphertext"), tag: try reader.readBytes(16, "\(what) tag"))
    }

    /// Seals `plaintext` under `key` with a fresh random nonce.
    static func seal<Generator: RandomNumberGenerator>(
        _ plaintext: [UInt8], key: SymmetricKey, authenticating aad: [UInt8], using generator: inout Generator
    ) throws(KeychainError) -> SlotBoxV3 {
        guard plaintext.count <= Int(UInt16.max) else { throw .limitReached("a key slot's sealed keys are more than 65,535 bytes") }
        let nonce = randomBytes(12, using: &generator)
        do {
            let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(data: nonce), authenticating: aad)
            return SlotBoxV3(nonce: nonce, ciphertext: box.ciphertext, tag: box.tag)
        } catch {
            throw .invalidParameter("key slot seal: \(error)")
        }
    }

    /// The plaintext, or `nil` when the box does not authenticate under `key` and `aad`. The caller wipes it.
    func open(key: SymmetricKey, authenticating aad: [UInt8]) -> [UInt8]? {
        guard let box = try? AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag) else { return nil }
        return try? AES.GCM.open(box, using: key, authenticating: aad)
    }
}
