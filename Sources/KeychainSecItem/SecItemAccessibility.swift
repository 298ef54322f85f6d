import KeychainFile

/// The `kSecAttrAccessible…` strings and the accessible codes of SPEC.md §8.2 (``Accessibility``).
enum SecItemAccessibility {
    /// Each string with its code, in code order.
    static let table: [(string: String, code: Int64)] = [
        (kSecAttrAccessibleWhenUnlocked, Accessibility.whenUnlocked.rawValue),
        (kSecAttrAccessibleAfterFirstUnlock, Accessibility.afterFirstUnlock.rawValue),
        (kSecAttrAccessibleAlways, Accessibility.always.rawValue),
        (kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, Accessibility.whenPasscodeSetThisDeviceOnly.rawValue),
        (kSecAttrAccessibleWhenUnlockedThisDeviceOnly, Accessibility.whenUnlockedThisDeviceOnly.rawValue),
        (kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, Accessibility.afterFirstUnlockThisDeviceOnly.rawValue),
        (kSecAttrAccessibleAlwaysThisDeviceOnly, Accessibility.alwaysThisDeviceOnly.rawValue),
    ]

    /// The code of a `kSecAttrAccessible…` string, or `nil` for another string.
    static func code(for string: String) -> Int64? {
        table.first { $0.string == string }?.code
    }

    /// The `kSecAttrAccessible…` string of a code, or `nil` for a code outside 1…7.
    static func string(for code: Int64) -> String? {
        table.first { $0.code == code }?.string
    }
}
