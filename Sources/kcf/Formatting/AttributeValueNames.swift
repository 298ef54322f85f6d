import KeychainFile

/// Names for the numeric values of attributes, for JSON output: `"accessible": "afterFirstUnlock"`,
/// `"keyType": "ec"`, `"protocol": "https"` rather than 2, 73 and `htps`.
enum AttributeValueNames {
    /// The name of `value` as a value of `attribute`, or `nil` when it has none (the number or code is shown).
    static func name(of value: Int64, for attribute: Attribute) -> String? {
        switch attribute {
        case .accessible: return Accessibility(rawValue: value).map { "\($0)" }
        case .keyClass: return KeyClass(rawValue: value).map(keyClassName)
        case .keyType: return keyTypes[value]
        case .certificateType: return (1...3).contains(value) ? "x509v\(value)" : nil
        case .certificateEncoding: return value == 3 ? "der" : nil
        case .protocolType: return UInt32(exactly: value).flatMap(FourCharacterCodeNames.protocols.name(of:))
        case .authenticationType: return UInt32(exactly: value).flatMap(FourCharacterCodeNames.authenticationTypes.name(of:))
        default: return nil
        }
    }

    /// The class as JSON names it: `genericPassword`, `internetPassword`, `certificate`, `key`.
    static func name(of itemClass: ItemClass) -> String {
        switch itemClass {
        case .genericPassword: return "genericPassword"
        case .internetPassword: return "internetPassword"
        case .certificate: return "certificate"
        case .key: return "key"
        }
    }

    private static func keyClassName(_ keyClass: KeyClass) -> String {
        switch keyClass {
        case .publicKey: return "public"
        case .privateKey: return "private"
        case .symmetric: return "symmetric"
        }
    }

    /// Apple's `kSecAttrKeyType…` values (CSSM algorithm ids).
    private static let keyTypes: [Int64: String] = [
        42: "rsa", 43: "dsa", 73: "ec", 0x8000_0001: "aes", 14: "des", 17: "3des", 23: "rc2", 25: "rc4", 56: "cast",
    ]
}
