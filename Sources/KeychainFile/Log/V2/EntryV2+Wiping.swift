import KeychainCrypto

extension EntryV2 {
    /// Overwrites the plaintext secrets of the puts in `entries` with zeros, once they are sealed. Each put is
    /// first replaced by a deletion of its item, so that its secret's array has no other owner and is wiped in
    /// place rather than copied.
    static func wipeSecrets(_ entries: inout [EntryV2]) {
        for index in entries.indices {
            guard case .put(let id, _, var secret) = entries[index] else { continue }
            entries[index] = .delete(id: id, time: 0)
            secret.withUnsafeMutableBytes { secureWipe($0) }
        }
    }
}
