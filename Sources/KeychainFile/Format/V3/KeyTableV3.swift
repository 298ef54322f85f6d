@_spi(KeychainFileInternals) import KeychainCrypto

/// The key table of a version 3 header (Docs/FormatVersion3.md §2.4): every access group's key id, name and key,
/// sealed under the root key, so that full credentials read every group's key from it and scoped ones copy it
/// unchanged.
///
/// Plaintext, big-endian: last key id assigned u8 ‖ group count u8 ‖ per group, in increasing key id: key id u8
/// (1 … last assigned) ‖ group key (32) ‖ name length u8 ‖ name (UTF-8), as ``KeySetV3/Group`` encodes it. A key
/// id at most the last assigned that no group has is **retired**: it is never given to another group, since slots
/// attested for it name it.
/// Sealed as nonce (12) ‖ ciphertext ‖ tag (16), AES-256-GCM under HKDF-SHA256(R, empty salt, "KCF3 key table" ‖
/// file id) with associated data "KCF3 key table" ‖ file id — nothing of the epoch, so that a scoped rewrite can
/// copy it byte for byte.
///
/// ```swift
/// let table = KeyTableV3(lastKeyID: 1, groups: [.init(keyID: 1, name: "", key: kDefault)])
/// let sealed = try table.seal(root: r, fileID: id, using: &generator)
/// let again = try KeyTableV3.open(sealed, root: r, fileID: id)
/// ```
struct KeyTableV3: Sendable {
    let lastKeyID: UInt8
    let groups: [KeySetV3.Group]

    static let label = Array("KCF3 key table".utf8)
    /// The name of the default group: items without an explicit access group belong to it.
    static let defaultGroupName = ""

    /// The group with `name`, if the table has it.
    func group(named name: String) -> KeySetV3.Group? { groups.first { $0.name == name } }

    /// Checks what a reader requires: key ids increasing, each 1 … ``lastKeyID``; 32-byte keys; names of at most
    /// 255 bytes, all different.
    func validate() throws(SlotProblemV3) {
        var previous: UInt8 = 0
        var names = Set<String>()
        for group in groups {
            guard group.keyID > previous, group.keyID <= lastKeyID else {
                throw SlotProblemV3("key id \(group.keyID) is out of order or beyond the last one assigned (\(lastKeyID))")
            }
            previous = group.keyID
            guard group.key.bitCount == 256 else { throw SlotProblemV3("group \(group.keyID)'s key is not 32 bytes") }
            guard group.name.utf8.count <= 255 else { throw SlotProblemV3("group \(group.keyID)'s name is more than 255 bytes") }
            guard names.insert(group.name).inserted else { throw SlotProblemV3("two groups are named \"\(group.name)\"") }
        }
    }

    /// The plaintext. It holds keys: the caller wipes it.
    func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 2 + groups.reduce(0) { $0 + $1.encodedCount })
        writer.writeUInt8(lastKeyID)
        writer.writeUInt8(UInt8(groups.count))
        for group in groups { group.encode(into: &writer) }
        return writer.bytes
    }

    /// The sealed table, as the header holds it.
    ///
    /// - Throws: `.invalidParameter` when the table is malformed (``validate()``).
    func seal<Generator: RandomNumberGenerator>(root: SymmetricKey, fileID: [UInt8], using generator: inout Generator) throws(KeychainError) -> [UInt8] {
        do throws(SlotProblemV3) {
            try validate()
        } catch {
            throw .invalidParameter("key table: \(error.reason)")
        }
        guard groups.count <= 255 else { throw .limitReached("a keychain holds at most 255 access groups") }
        var plaintext = encode()
        defer { plaintext.withUnsafeMutableBytes { secureWipe($0) } }
        let nonce = randomBytes(12, using: &generator)
        do {
            let box = try AES.GCM.seal(plaintext, using: try Self.key(root: root, fileID: fileID), nonce: AES.GCM.Nonce(data: nonce), authenticating: Self.label + fileID)
            return nonce + box.ciphertext + box.tag
        } catch let error as KeychainError {
            throw error
        } catch {
            throw .invalidParameter("key table seal: \(error)")
        }
    }

    /// Opens and reads a sealed table.
    ///
    /// - Throws: the reason, in words, when it does not authenticate under `root` or is malformed; the caller adds
    ///   where.
    static func open(_ sealed: [UInt8], root: SymmetricKey, fileID: [UInt8]) throws(SlotProblemV3) -> KeyTableV3 {
        guard sealed.count >= 28 else { throw SlotProblemV3("the sealed key table is shorter than a nonce and a tag") }
        guard let key = try? key(root: root, fileID: fileID),
              let box = try? AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: sealed[0..<12]), ciphertext: sealed[12..<(sealed.count - 16)], tag: sealed[(sealed.count - 16)...]),
              var plaintext = try? AES.GCM.open(box, using: key, authenticating: label + fileID)
        else {
            throw SlotProblemV3("the key table does not authenticate under the root key")
        }
        defer { plaintext.withUnsafeMutableBytes { secureWipe($0) } }
        var reader = ByteReader(plaintext)
        do {
            let lastKeyID = try reader.readUInt8("last key id")
            let count = Int(try reader.readUInt8("group count"))
            var groups: [KeySetV3.Group] = []
            for _ in 0..<count {
                // The key is made from a slice of `plaintext`, which is wiped: no other copy is left behind.
                groups.append(try KeySetV3.Group.decode(from: &reader, keysIn: plaintext, fieldNames: ("key id", "name length", "name")))
            }
            guard reader.isAtEnd else { throw SlotProblemV3("\(reader.remaining) bytes follow the key table's last group") }
            let table = KeyTableV3(lastKeyID: lastKeyID, groups: groups)
            try table.validate()
            return table
        } catch let underflow as ByteReader.Underflow {
            throw SlotProblemV3("the key table ends inside its \(underflow.field)")
        } catch let error as SlotProblemV3 {
            throw error
        } catch {
            throw SlotProblemV3("\(error)")
        }
    }

    private static func key(root: SymmetricKey, fileID: [UInt8]) throws(KeychainError) -> SymmetricKey {
        guard root.bitCount == 256, fileID.count == 16 else { throw .invalidParameter("the key table's key comes from a 32-byte root and a 16-byte file id") }
        do {
            return try HKDF<SHA256>.deriveKey(inputKeyMaterial: root, salt: [UInt8](), info: label + fileID, outputByteCount: 32)
        } catch {
            throw .invalidParameter("HKDF: \(error)")
        }
    }
}
