import KeychainFile

/// What `kcf` says on stderr at every open of a keychain with a key slot near its grant limit (format version 3,
/// Docs/FormatVersion3.md §2.2): the slot by its id, and that its own credential should compact the keychain soon.
/// A warning only: the command goes on, and its exit status is its own.
enum GrantLimitNotice {
    /// Writes one warning line for each slot of `keychain` near its grant limit (``KeySlotInfo/isNearGrantLimit``).
    static func report(_ keychain: Keychain, command: String) {
        // The slots are in the header the open read; keySlots() throws only when catching up fails, which the
        // command itself then meets and reports.
        for slot in (try? keychain.keySlots()) ?? [] {
            if let warning = slot.grantWarning { Output.error("kcf: \(command): warning: key slot \(Hex.lower(slot.id)) holds \(warning)") }
        }
    }
}
