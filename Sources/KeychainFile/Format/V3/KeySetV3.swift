@_spi(KeychainFileInternals) import KeychainCrypto

/// The keys a version 3 slot gives its credential (Docs/FormatVersion3.md §2.1–§2.2): the log key every holder
/// has, the root key a full credential has or the group keys a scoped one has, and the root agreement public key
/// `ρ` through which the slot trusts the next grant.
///
/// Sealed in an anchor or a grant as (big-endian): log key (32) ‖ `ρ` (32) ‖ flags u8 (bit 0: a root key follows;
/// the others zero) ‖ root key (32, if flagged) ‖ group count u8 ‖ per group, in increasing key id: key id u8
/// (1 … 255) ‖ group key (32) ‖ name length u8 ‖ name (UTF-8), as ``Group`` encodes it.
struct KeySetV3: Sendable {
    let logKey: SymmetricKey
    let rootAgreementPublicKey: [UInt8]
    let root: SymmetricKey?
    let groups: [Group]

    /// A full credential's keys: `ρ` is the root's own.
    static func full(logKey: SymmetricKey, root: SymmetricKey, fileID: [UInt8]) throws(KeychainError) -> KeySetV3 {
        KeySetV3(logKey: logKey, rootAgreementPublicKey: try SlotKeysV3.rootAgreementPublicKey(root: root, fileID: fileID),
                 root: root, groups: [])
    }

    /// The scope these keys fit: full with a root key, else the groups' key ids.
    var scope: SlotScopeV3 { root == nil ? .groups(groups.map(\.keyID)) : .full }

    /// The plaintext an anchor or grant seals; call ``validate(fileID:)`` first. It holds keys: the caller wipes it.
    func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 98 + groups.reduce(0) { $0 + $1.encodedCount })
        logKey.withUnsafeBytes { writer.writeBytes($0) }
        writer.writeBytes(rootAgreementPublicKey)
        writer.writeUInt8(root == nil ? 0 : 1)
        root?.withUnsafeBytes { writer.writeBytes($0) }
        writer.writeUInt8(UInt8(groups.count))
        for group in groups { group.encode(into: &writer) }
        return writer.bytes
    }

    /// Checks that the keys can be sealed and fit the scope they have: 32-byte keys; a full set with its root's `ρ`
    /// and no groups; a scoped one with no root and 1 … 255 groups in increasing key id, names of at most 255 bytes.
    ///
    /// - Throws: the reason, in words.
    func validate(fileID: [UInt8]) throws(SlotProblemV3) {
        guard logKey.bitCount == 256, rootAgreementPublicKey.count == 32 else { throw SlotProblemV3("the log key or ρ is not 32 bytes") }
        if let root {
            guard groups.isEmpty else { throw SlotProblemV3("a full key set lists groups") }
            guard root.bitCount == 256, (try? SlotKeysV3.rootAgreementPublicKey(root: root, fileID: fileID)) == rootAgreementPublicKey else {
                throw SlotProblemV3("the root agreement key is not the root key's")
            }
        } else {
            guard SlotScopeV3.isValid(groups.map(\.keyID)), groups.count <= 255 else {
                throw SlotProblemV3("a scoped key set has 1 … 255 groups with nonzero key ids in increasing order")
            }
            for group in groups {
                guard group.key.bitCount == 256 else { throw SlotProblemV3("group \(group.keyID)'s key is not 32 bytes") }
                guard group.name.utf8.count <= 255 else { throw SlotProblemV3("group \(group.keyID)'s name is more than 255 bytes") }
            }
        }
    }

    /// Reads a plaintext that authenticated, from `start` to its end, and checks it against the slot's scope.
    ///
    /// - Throws: the reason, in words, when it is malformed or does not fit `scope`; the caller adds where.
    static func decode(_ bytes: [UInt8], from start: Int = 0, scope: SlotScopeV3, fileID: [UInt8]) throws(SlotProblemV3) -> KeySetV3 {
        guard start <= bytes.count else { throw SlotProblemV3("the key set is missing") }
        var reader = ByteReader(bytes, range: start..<bytes.count)
        do {
            // Keys are made from slices of `bytes`, which the caller wipes: no other copy is left behind.
            let logKey = SymmetricKey(data: bytes[try reader.readRange(32, "log key")])
            let rho = try reader.readBytes(32, "root agreement key")
            let flags = try reader.readUInt8("flags")
            guard flags & 0xFE == 0 else { throw SlotProblemV3("unknown key set flags \(flags)") }
            let root = flags & 1 == 1 ? SymmetricKey(data: bytes[try reader.readRange(32, "root key")]) : nil
            let count = Int(try reader.readUInt8("group count"))
            var groups: [Group] = []
            for _ in 0..<count {
                groups.append(try Group.decode(from: &reader, keysIn: bytes, fieldNames: ("group key id", "group name length", "group name")))
            }
            guard reader.isAtEnd else { throw SlotProblemV3("\(reader.remaining) bytes follow the key set") }
            let keys = KeySetV3(logKey: logKey, rootAgreementPublicKey: rho, root: root, groups: groups)
            try keys.validate(fileID: fileID)
            guard keys.scope == scope else { throw SlotProblemV3("the keys are not of the slot's scope") }
            return keys
        } catch let underflow as ByteReader.Underflow {
            throw SlotProblemV3("the key set ends inside its \(underflow.field)")
        } catch let error as SlotProblemV3 {
            throw error
        } catch {
            throw SlotProblemV3("\(error)")
        }
    }
}
