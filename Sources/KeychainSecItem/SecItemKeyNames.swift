/// The names of the keys of SecItem dictionaries, for messages: `"v_Data"` reads as `kSecValueData`.
enum SecItemKeyNames {
    /// Each key's constant, by the key's string.
    static let names: [String: String] = Dictionary(
        [
            (kSecClass, "kSecClass"), (kSecValueData, "kSecValueData"), (kSecValueRef, "kSecValueRef"),
            (kSecValuePersistentRef, "kSecValuePersistentRef"), (kSecReturnData, "kSecReturnData"),
            (kSecReturnAttributes, "kSecReturnAttributes"), (kSecReturnRef, "kSecReturnRef"),
            (kSecReturnPersistentRef, "kSecReturnPersistentRef"), (kSecMatchLimit, "kSecMatchLimit"),
            (kSecAttrAccessGroup, "kSecAttrAccessGroup"), (kSecAttrAccessible, "kSecAttrAccessible"),
            (kSecAttrSynchronizable, "kSecAttrSynchronizable"), (kSecAttrLabel, "kSecAttrLabel"),
            (kSecAttrCreationDate, "kSecAttrCreationDate"), (kSecAttrModificationDate, "kSecAttrModificationDate"),
            (kSecAttrAccount, "kSecAttrAccount"), (kSecAttrService, "kSecAttrService"),
            (kSecAttrGeneric, "kSecAttrGeneric"), (kSecAttrDescription, "kSecAttrDescription"),
            (kSecAttrComment, "kSecAttrComment"), (kSecAttrCreator, "kSecAttrCreator"),
            (kSecAttrType, "kSecAttrType"), (kSecAttrIsInvisible, "kSecAttrIsInvisible"),
            (kSecAttrIsNegative, "kSecAttrIsNegative"), (kSecAttrServer, "kSecAttrServer"),
            (kSecAttrSecurityDomain, "kSecAttrSecurityDomain"), (kSecAttrProtocol, "kSecAttrProtocol"),
            (kSecAttrAuthenticationType, "kSecAttrAuthenticationType"), (kSecAttrPort, "kSecAttrPort"),
            (kSecAttrPath, "kSecAttrPath"), (kSecAttrCertificateType, "kSecAttrCertificateType"),
            (kSecAttrCertificateEncoding, "kSecAttrCertificateEncoding"), (kSecAttrSubject, "kSecAttrSubject"),
            (kSecAttrIssuer, "kSecAttrIssuer"), (kSecAttrSerialNumber, "kSecAttrSerialNumber"),
            (kSecAttrSubjectKeyID, "kSecAttrSubjectKeyID"), (kSecAttrPublicKeyHash, "kSecAttrPublicKeyHash"),
            (kSecAttrKeyClass, "kSecAttrKeyClass"), (kSecAttrApplicationLabel, "kSecAttrApplicationLabel"),
            (kSecAttrApplicationTag, "kSecAttrApplicationTag"), (kSecAttrKeyType, "kSecAttrKeyType"),
            (kSecAttrKeySizeInBits, "kSecAttrKeySizeInBits"), (kSecAttrEffectiveKeySize, "kSecAttrEffectiveKeySize"),
            (kSecAttrIsPermanent, "kSecAttrIsPermanent"), (kSecAttrCanEncrypt, "kSecAttrCanEncrypt"),
            (kSecAttrCanDecrypt, "kSecAttrCanDecrypt"), (kSecAttrCanDerive, "kSecAttrCanDerive"),
            (kSecAttrCanSign, "kSecAttrCanSign"), (kSecAttrCanVerify, "kSecAttrCanVerify"),
            (kSecAttrCanWrap, "kSecAttrCanWrap"), (kSecAttrCanUnwrap, "kSecAttrCanUnwrap"),
        ],
        // "type" is both kSecAttrType (a password's type code) and kSecAttrKeyType (a key's algorithm).
        uniquingKeysWith: { "\($0)/\($1)" })

    /// `key` as a person reads it: the constant's name, or the string in quotes for a key that is none.
    static func describe(_ key: String) -> String {
        names[key] ?? "\"\(key)\""
    }
}
