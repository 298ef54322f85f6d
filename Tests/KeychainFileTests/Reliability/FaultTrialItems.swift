@testable import KeychainFile

/// The items the fault trials' template keychains hold (``DiskFaultTests`` and ``RotatingChangeFaultTests``), added
/// in one place so that both suites' templates hold the same: five items of four classes (generic passwords 0 and 1,
/// internet password 3, key 4, and certificate 9 with a 2,000-byte secret), and generic password 2 added and then
/// deleted, so that a compaction has something to drop.
///
/// ```swift
/// let keychain = try Keychain.create(at: path, credential: credential, options: options)
/// try FaultTrialItems.add(to: keychain)
/// ```
enum FaultTrialItems {
    /// Adds the items to `keychain` and deletes the one it deletes, each as a change of its own.
    static func add(to keychain: Keychain) throws(KeychainError) {
        for (variant, itemClass) in [ItemClass.genericPassword, .genericPassword, .genericPassword, .internetPassword, .key].enumerated() {
            try keychain.add(try fullAttributes(of: itemClass, variant: variant), secret: Array("secret \(variant)".utf8))
        }
        try keychain.delete(Query(.genericPassword, attributes: [.account: fullAttributes(of: .genericPassword, variant: 2)[.account]!],
                                  synchronizable: .any))
        try keychain.add(try fullAttributes(of: .certificate, variant: 9), secret: [UInt8](repeating: 0x30, count: 2_000))
    }
}
