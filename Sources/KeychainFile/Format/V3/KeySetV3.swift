@_spi(KeychainFileInternals) import KeychainCrypto

/// The keys a version 3 slot gives its credential (Docs/FormatVersion3.md §2.1–§2.2): the log key every holder
/// has, the root key a full credential has or the group keys a scoped one has, and the root agreement public key
/// `ρ` through which the slot trusts the next grant.
///
/// Sealed in an anchor or a grant as (big-endian): log key (32) ‖ `ρ` (32) ‖ flags u8 (bit 0: a root key follows;
/// the others zero) ‖ root key (32, if flagged) ‖ group count u8 ‖ per group, in increasing key id: key id u8
/// (1 … 255) ‖ group key (32) ‖ name length u8 ‖ name (UTF-8).
struct KeySetV3: Sendable {
    /// One access group's key, as a scoped slot holds it.
    struct Group: Sendable {
        let keyID: UInt8
        let name: String
        let key: SymmetricKey
    }

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

    /// The plaintext an anchor or grant seals. It holds keys: the caller wipes it.
    func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 98 + groups.count * 40)
        logKey.withUnsafeBytes { writer.writeBytes($0) }
        writer.writeBytes(rootAgreementPublicKey)
        writer.writeUInt8(root == nil ? 0 : 1)
        root?.withUnsafeBytes { writer.writeBytes($0) }
        writer.writeUInt8(UInt8(groups.count))
        for group in groups {
            writer.writeUInt8(group.keyID)
            group.key.withUnsafeBytes { writer.writeBytes($0) }
            let name = Array(group.name.utf8)
            writer.writeUInt8(UInt8(name.count))
            writer.writeBytes(name)
        }
        return writer.bytes
    }

    /// Reads a plaintext that authenticated, and checks it against the slot's scope.
    ///
    /// - Throws: the reason, in words, when it is malformed or does not fit `scope`; the caller adds where.
    static func decode(_ bytes: [UInt8], scope: SlotScopeV3, fileID: [UInt8]) throws(SlotProblemV3) -> KeySetV3 {
        var reader = ByteReader(bytes)
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
                let keyID = try reader.readUInt8("group key id")
                guard keyID != 0, keyID > (groups.last?.keyID ?? 0) else {
                    throw SlotProblemV3("group key ids are not 1 … 255 in increasing order")
                }
                let key = SymmetricKey(data: bytes[try reader.readRange(32, "group key")])
                let nameBytes = try reader.readBytes(Int(try reader.readUInt8("group name length")), "group name")
                guard let name = String(validating: nameBytes, as: UTF8.self) else {
                    throw SlotProblemV3("group \(keyID)'s name is not UTF-8")
                }
                groups.append(Group(keyID: keyID, name: name, key: key))
            }
            guard reader.isAtEnd else { throw SlotProblemV3("\(reader.remaining) bytes follow the key set") }
            let keys = KeySetV3(logKey: logKey, rootAgreementPublicKey: rho, root: root, groups: groups)
            switch scope {
            case .full:
                guard let root, groups.isEmpty else { throw SlotProblemV3("a full slot's keys lack the root key or list groups") }
                guard (try? SlotKeysV3.rootAgreementPublicKey(root: root, fileID: fileID)) == rho else {
                    throw SlotProblemV3("the root agreement key is not the root key's")
                }
            case .groups(let keyIDs):
                guard root == nil, groups.map(\.keyID) == keyIDs else {
                    throw SlotProblemV3("a scoped slot's keys are not those of its groups \(keyIDs)")
                }
            }
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
