import KeychainFile

/// The correspondence between Apple's attribute keys and KeychainFile's attributes (SPEC.md §8.2).
///
/// Every KeychainFile attribute has one Apple key; Apple uses `"type"` both for a password's four-character
/// type and for a key's algorithm, so that key names two attributes, told apart by the item's class.
/// `kSecAttrSynchronizable` is in the table but queries treat it apart (`SecItemDictionary`).
enum SecItemAttributeKeys {
    /// Each Apple key with the attribute it names.
    static let table: [(key: String, attribute: Attribute)] = [
        (kSecAttrAccessGroup, .accessGroup), (kSecAttrAccessible, .accessible),
        (kSecAttrSynchronizable, .synchronizable), (kSecAttrLabel, .label),
        (kSecAttrCreationDate, .creationDate), (kSecAttrModificationDate, .modificationDate),
        (kSecAttrAccount, .account), (kSecAttrService, .service), (kSecAttrGeneric, .generic),
        (kSecAttrDescription, .itemDescription), (kSecAttrComment, .comment), (kSecAttrCreator, .creator),
        (kSecAttrType, .itemType), (kSecAttrIsInvisible, .isInvisible), (kSecAttrIsNegative, .isNegative),
        (kSecAttrServer, .server), (kSecAttrSecurityDomain, .securityDomain), (kSecAttrProtocol, .protocolType),
        (kSecAttrAuthenticationType, .authenticationType), (kSecAttrPort, .port), (kSecAttrPath, .path),
        (kSecAttrCertificateType, .certificateType), (kSecAttrCertificateEncoding, .certificateEncoding),
        (kSecAttrSubject, .subject), (kSecAttrIssuer, .issuer), (kSecAttrSerialNumber, .serialNumber),
        (kSecAttrSubjectKeyID, .subjectKeyID), (kSecAttrPublicKeyHash, .publicKeyHash),
        (kSecAttrKeyClass, .keyClass), (kSecAttrApplicationLabel, .applicationLabel),
        (kSecAttrApplicationTag, .applicationTag), (kSecAttrKeyType, .keyType),
        (kSecAttrKeySizeInBits, .keySizeInBits), (kSecAttrEffectiveKeySize, .effectiveKeySize),
        (kSecAttrIsPermanent, .isPermanent), (kSecAttrCanEncrypt, .canEncrypt), (kSecAttrCanDecrypt, .canDecrypt),
        (kSecAttrCanDerive, .canDerive), (kSecAttrCanSign, .canSign), (kSecAttrCanVerify, .canVerify),
        (kSecAttrCanWrap, .canWrap), (kSecAttrCanUnwrap, .canUnwrap),
    ]

    /// The Apple keys that name an attribute.
    static let keys: Set<String> = Set(table.map(\.key))

    /// Whether `key` is an attribute key.
    static func isAttributeKey(_ key: String) -> Bool {
        keys.contains(key)
    }

    /// The attribute `key` names in items of `itemClass`; for identities, a certificate's attribute, else a
    /// key's (as Apple's keychain resolves identity attributes).
    ///
    /// - Throws: errSecNoSuchAttr when `key` is an attribute key that items of the class do not have.
    static func attribute(forKey key: String, in itemClass: QueryClass) throws(SecItemFailure) -> Attribute {
        let classes: [ItemClass] = itemClass.itemClass.map { [$0] } ?? [.certificate, .key]
        for storedClass in classes {
            if let entry = table.first(where: { $0.key == key && $0.attribute.isAllowed(in: storedClass) }) {
                return entry.attribute
            }
        }
        throw SecItemFailure(errSecNoSuchAttr, "\(SecItemKeyNames.describe(key)): not an attribute of \(itemClass) items")
    }

    /// The Apple key of `attribute`.
    static func key(for attribute: Attribute) -> String {
        table.first { $0.attribute == attribute }?.key ?? attribute.name
    }
}
