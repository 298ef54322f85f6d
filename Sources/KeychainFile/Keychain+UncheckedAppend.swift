extension Keychain {
    /// An operation written by ``appendUnchecked(_:)``.
    @_spi(Fixtures)
    public enum UncheckedOperation: Sendable {
        case put(id: ItemID, attributes: ItemAttributes, secret: [UInt8])
        case delete(id: ItemID)
    }

    /// Seals and appends a record exactly as given, without checking it against the keychain's items and
    /// without applying it: for writing hostile test files (a record that breaks uniqueness, deletes an
    /// unknown item) that a reader must reject. The keychain object is not consistent with its file
    /// afterwards and should not be used again.
    @_spi(Fixtures)
    public func appendUnchecked(_ operations: [UncheckedOperation]) throws(KeychainError) {
        let entries: [LogEntry] = operations.map { operation in
            switch operation {
            case .put(let id, let attributes, let secret): return .put(id: id, attributes: attributes, secret: .bytes(secret))
            case .delete(let id): return .delete(id: id)
            }
        }
        try withWrite { () throws(KeychainError) in
            writesBegun = true
            _ = try log.append(entries, before: { self.index[$0] }, using: &random)
        }
    }
}
