/// When an item may be read, with Apple's `kSecAttrAccessible…` meanings and the codes of SPEC.md §8.2.
///
/// KeychainFile stores the value so that items keep it when moved to and from Apple's keychain; the file
/// itself is protected by its password or key alone, so the value does not change who can read an item.
///
/// For example:
/// ```swift
/// var password = GenericPassword(service: "mail", account: "ann", password: "s3cret")
/// password.accessible = .afterFirstUnlockThisDeviceOnly
/// ```
public enum Accessibility: Int64, Sendable, CaseIterable {
    /// Readable while the device is unlocked (`kSecAttrAccessibleWhenUnlocked`). The default.
    case whenUnlocked = 1
    /// Readable after the first unlock following a restart (`kSecAttrAccessibleAfterFirstUnlock`).
    case afterFirstUnlock = 2
    /// Always readable (`kSecAttrAccessibleAlways`, deprecated by Apple).
    case always = 3
    /// Readable while unlocked, only if a passcode is set; never migrates
    /// (`kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly`).
    case whenPasscodeSetThisDeviceOnly = 4
    /// Readable while unlocked; never migrates (`kSecAttrAccessibleWhenUnlockedThisDeviceOnly`).
    case whenUnlockedThisDeviceOnly = 5
    /// Readable after the first unlock; never migrates (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`).
    case afterFirstUnlockThisDeviceOnly = 6
    /// Always readable; never migrates (`kSecAttrAccessibleAlwaysThisDeviceOnly`, deprecated by Apple).
    case alwaysThisDeviceOnly = 7
}
