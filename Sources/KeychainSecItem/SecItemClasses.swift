import KeychainFile

/// The `kSecClass…` values and the classes a KeychainFile ``Query`` searches.
enum SecItemClasses {
    /// Each class value with its query class.
    static let table: [(name: String, itemClass: QueryClass)] = [
        (kSecClassGenericPassword, .genericPassword), (kSecClassInternetPassword, .internetPassword),
        (kSecClassCertificate, .certificate), (kSecClassKey, .key), (kSecClassIdentity, .identity),
    ]

    /// The stored classes, in the order a persistent reference's class is looked for.
    static let stored: [QueryClass] = [.genericPassword, .internetPassword, .certificate, .key]

    /// The class a `kSecClass` value names.
    ///
    /// - Throws: errSecParam when the value is not a string; errSecNoSuchClass for an unknown class.
    static func queryClass(_ value: Any) throws(SecItemFailure) -> QueryClass {
        guard let name = SecItemValueReader.string(value) else {
            throw .parameter("kSecClass: \(SecItemValueReader.describe(value)) is not a class name")
        }
        guard let entry = table.first(where: { $0.name == name }) else {
            throw SecItemFailure(errSecNoSuchClass, "kSecClass: \"\(name)\" is not a supported class")
        }
        return entry.itemClass
    }

    /// The `kSecClass` value of a query class.
    static func name(of itemClass: QueryClass) -> String {
        table.first { $0.itemClass == itemClass }?.name ?? kSecClassGenericPassword
    }
}
