/// What a version 3 key slot's credential opens (Docs/FormatVersion3.md §2.3): the whole keychain, or only the
/// access groups whose key ids are listed (1 … 255 of them, each 1 … 255, increasing). The slot shows the key ids
/// in the clear, as records show which key ids they use; the groups' names are only in sealed places.
enum SlotScopeV3: Sendable, Equatable {
    case full
    case groups([UInt8])

    /// The scope's bytes in the slot: a count u8 (0 for full) and the key ids.
    var bytes: [UInt8] {
        switch self {
        case .full: return [0]
        case .groups(let keyIDs): return [UInt8(keyIDs.count)] + keyIDs
        }
    }

    /// Whether the key ids can be a scope: 1 … 255 of them, nonzero and increasing.
    static func isValid(_ keyIDs: [UInt8]) -> Bool {
        !keyIDs.isEmpty && keyIDs.first != 0 && zip(keyIDs, keyIDs.dropFirst()).allSatisfy { $0 < $1 }
    }
}
