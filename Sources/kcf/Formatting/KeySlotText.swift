import KeychainFile

/// How a key slot is printed: by `show-keychain-info` among the keychain's facts, and by `list-credentials` and the
/// credential commands one slot a line.
enum KeySlotText {
    /// The slot's kind and key derivation, such as `password, Argon2id, 65536 KiB, 3 passes, 4 lanes`.
    static func kind(_ kind: KeySlotInfo.Kind) -> String {
        switch kind {
        case .password(let iterations): return "password, PBKDF2-HMAC-SHA256, \(iterations) iterations"
        case .rawKey: return "raw key (32 bytes, no key derivation)"
        case .passwordArgon2id(let memory, let passes, let lanes):
            return "password, Argon2id, \(memory) KiB, \(passes) passes, \(lanes) lanes"
        }
    }

    /// One line: the slot's id (32 hexadecimal digits, as `remove-credential` takes it), then its kind, the access
    /// groups it reaches, and what to do when it is near its grant limit (format version 3).
    static func line(_ slot: KeySlotInfo) -> String {
        "\(Hex.lower(slot.id))  \(kind(slot.kind))" + (slot.scope.accessGroups.map { "; access groups: \($0.joined(separator: ", "))" } ?? "")
            + (slot.grantWarning.map { "; \($0)" } ?? "")
    }

    /// The slot as a JSON object: id, kind, kdf, the KDF's parameters, the access groups it reaches (`null`: the
    /// whole keychain), the grants it holds (0 before format version 3) and how many more it takes.
    static func json(_ slot: KeySlotInfo) -> JSONValue {
        guard case .object(var fields) = kdfJSON(slot) else { return kdfJSON(slot) }
        fields["accessGroups"] = slot.scope.accessGroups.map { .array($0.map(JSONValue.string)) } ?? .null
        fields["grants"] = .integer(Int64(slot.grants))
        fields["grantsLeft"] = .integer(Int64(slot.grantsLeft))
        return .object(fields)
    }

    private static func kdfJSON(_ slot: KeySlotInfo) -> JSONValue {
        switch slot.kind {
        case .password(let iterations):
            return .object(["id": .string(Hex.lower(slot.id)), "kind": .string("password"), "kdf": .string("PBKDF2-HMAC-SHA256"),
                            "iterations": .integer(Int64(iterations))])
        case .rawKey:
            return .object(["id": .string(Hex.lower(slot.id)), "kind": .string("rawKey"), "kdf": .null, "iterations": .null])
        case .passwordArgon2id(let memory, let passes, let lanes):
            return .object([
                "id": .string(Hex.lower(slot.id)), "kind": .string("password"), "kdf": .string("Argon2id"), "iterations": .null,
                "memoryKiB": .integer(Int64(memory)), "passes": .integer(Int64(passes)), "lanes": .integer(Int64(lanes)),
            ])
        }
    }
}
