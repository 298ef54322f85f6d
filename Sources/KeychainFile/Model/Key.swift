#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A cryptographic key, like Apple's `kSecClassKey` items. The key's bytes are the secret value.
///
/// Its primary key is ``keyClass``, ``applicationLabel``, ``applicationTag``, ``keyType``,
/// ``keySizeInBits`` and ``effectiveKeySize`` (with ``accessGroup`` and ``synchronizable``).
///
/// For example:
/// ```swift
/// let key = Key(
///     keyClass: .privateKey, applicationTag: Array("com.example.signing".utf8),
///     keyType: .ellipticCurve, keySizeInBits: 256, canSign: true, value: privateKeyBytes)
/// try keychain.add(key)
/// ```
public struct Key: KeychainItem {
    /// Keys are items of class ``ItemClass/key``.
    public static let itemClass = ItemClass.key

    /// Public, private or symmetric. Part of the primary key.
    public var keyClass: KeyClass
    /// Bytes that identify the key; for a private key, normally its certificate's public key hash. Part
    /// of the primary key.
    public var applicationLabel: [UInt8]
    /// Application-defined bytes, such as a reverse-DNS name. Part of the primary key.
    public var applicationTag: [UInt8]
    /// The algorithm. Part of the primary key.
    public var keyType: KeyType
    /// The key size in bits. Part of the primary key.
    public var keySizeInBits: Int64
    /// The effective key size in bits. Part of the primary key.
    public var effectiveKeySize: Int64
    /// The access group the item belongs to. Part of the primary key.
    public var accessGroup: String
    /// When the item may be read (stored; see ``Accessibility``).
    public var accessible: Accessibility
    /// Whether the item is synchronised between devices. Part of the primary key.
    public var synchronizable: Bool
    /// A label for people to read.
    public var label: String?
    /// Whether the key is stored permanently.
    public var isPermanent: Bool?
    /// Whether the key may encrypt.
    public var canEncrypt: Bool?
    /// Whether the key may decrypt.
    public var canDecrypt: Bool?
    /// Whether the key may derive other keys.
    public var canDerive: Bool?
    /// Whether the key may sign.
    public var canSign: Bool?
    /// Whether the key may verify signatures.
    public var canVerify: Bool?
    /// Whether the key may wrap other keys.
    public var canWrap: Bool?
    /// Whether the key may unwrap other keys.
    public var canUnwrap: Bool?
    /// When the item was added; set by the keychain.
    public internal(set) var creationDate: Date?
    /// When the item last changed; set by the keychain.
    public internal(set) var modificationDate: Date?
    /// The key's bytes; `nil` when they were not loaded.
    public var value: [UInt8]?

    /// Creates a key item.
    ///
    /// For example:
    /// ```swift
    /// let key = Key(keyClass: .symmetric, keyType: KeyType(rawValue: 0x41455320), keySizeInBits: 256, value: bytes)
    /// ```
    ///
    /// - Parameters:
    ///   - keyClass: Public, private or symmetric; part of the primary key.
    ///   - applicationLabel: Bytes that identify the key; part of the primary key.
    ///   - applicationTag: Application-defined bytes; part of the primary key.
    ///   - keyType: The algorithm, 0 when unspecified; part of the primary key.
    ///   - keySizeInBits: The key size in bits; part of the primary key.
    ///   - effectiveKeySize: The effective key size in bits, `keySizeInBits` when `nil`; part of the
    ///     primary key.
    ///   - accessGroup: The access group; part of the primary key.
    ///   - accessible: When the item may be read.
    ///   - synchronizable: Whether the item is synchronised; part of the primary key.
    ///   - label: A label for people.
    ///   - isPermanent: Whether the key is stored permanently.
    ///   - canEncrypt: Whether the key may encrypt.
    ///   - canDecrypt: Whether the key may decrypt.
    ///   - canDerive: Whether the key may derive other keys.
    ///   - canSign: Whether the key may sign.
    ///   - canVerify: Whether the key may verify.
    ///   - canWrap: Whether the key may wrap other keys.
    ///   - canUnwrap: Whether the key may unwrap other keys.
    ///   - value: The key's bytes.
    public init(
        keyClass: KeyClass, applicationLabel: [UInt8] = [], applicationTag: [UInt8] = [],
        keyType: KeyType = KeyType(rawValue: 0),
        keySizeInBits: Int64 = 0, effectiveKeySize: Int64? = nil,
        accessGroup: String = "", accessible: Accessibility = .whenUnlocked, synchronizable: Bool = false,
        label: String? = nil, isPermanent: Bool? = nil, canEncrypt: Bool? = nil, canDecrypt: Bool? = nil,
        canDerive: Bool? = nil, canSign: Bool? = nil, canVerify: Bool? = nil, canWrap: Bool? = nil,
        canUnwrap: Bool? = nil, value: [UInt8]? = nil
    ) {
        self.keyClass = keyClass
        self.applicationLabel = applicationLabel
        self.applicationTag = applicationTag
        self.keyType = keyType
        self.keySizeInBits = keySizeInBits
        self.effectiveKeySize = effectiveKeySize ?? keySizeInBits
        self.accessGroup = accessGroup
        self.accessible = accessible
        self.synchronizable = synchronizable
        self.label = label
        self.isPermanent = isPermanent
        self.canEncrypt = canEncrypt
        self.canDecrypt = canDecrypt
        self.canDerive = canDerive
        self.canSign = canSign
        self.canVerify = canVerify
        self.canWrap = canWrap
        self.canUnwrap = canUnwrap
        self.value = value
    }

    /// Creates a key item from stored attributes and, when loaded, the key's bytes.
    ///
    /// Absent primary-key attributes read as their defaults (key class 0 = public, empty bytes, 0).
    ///
    /// - Parameters:
    ///   - attributes: Attributes of a key item.
    ///   - value: The key's bytes, or `nil`.
    /// - Throws: `KeychainError.invalidParameter` when `attributes` are of another class.
    public init(attributes: ItemAttributes, value: [UInt8]?) throws(KeychainError) {
        try Self.requireClass(of: attributes)
        self.init(
            keyClass: attributes.integer(.keyClass).flatMap(KeyClass.init(rawValue:)) ?? .publicKey,
            applicationLabel: attributes.bytes(.applicationLabel) ?? [],
            applicationTag: attributes.bytes(.applicationTag) ?? [],
            keyType: KeyType(rawValue: attributes.integer(.keyType) ?? 0),
            keySizeInBits: attributes.integer(.keySizeInBits) ?? 0,
            effectiveKeySize: attributes.integer(.effectiveKeySize) ?? 0,
            accessGroup: attributes.string(.accessGroup) ?? "", accessible: attributes.accessibility,
            synchronizable: attributes.boolean(.synchronizable) ?? false, label: attributes.string(.label),
            isPermanent: attributes.boolean(.isPermanent), canEncrypt: attributes.boolean(.canEncrypt),
            canDecrypt: attributes.boolean(.canDecrypt), canDerive: attributes.boolean(.canDerive),
            canSign: attributes.boolean(.canSign), canVerify: attributes.boolean(.canVerify),
            canWrap: attributes.boolean(.canWrap), canUnwrap: attributes.boolean(.canUnwrap), value: value)
        creationDate = attributes.date(.creationDate)
        modificationDate = attributes.date(.modificationDate)
    }

    /// The item's attributes, checked, with the defaults of SPEC.md §8.2 added.
    ///
    /// - Throws: `KeychainError.invalidParameter` naming the field when a bytes field is longer than
    ///   65,535 bytes or the label longer than 65,535 bytes of UTF-8.
    public var attributes: ItemAttributes {
        get throws(KeychainError) {
            var builder = AttributeBuilder(Self.itemClass)
            builder.setCommon(
                accessGroup: accessGroup, accessible: accessible, synchronizable: synchronizable, label: label,
                creationDate: creationDate, modificationDate: modificationDate)
            builder.set(.keyClass, keyClass.rawValue)
            builder.set(.applicationLabel, applicationLabel)
            builder.set(.applicationTag, applicationTag)
            builder.set(.keyType, keyType.rawValue)
            builder.set(.keySizeInBits, keySizeInBits)
            builder.set(.effectiveKeySize, effectiveKeySize)
            builder.set(.isPermanent, isPermanent)
            builder.set(.canEncrypt, canEncrypt)
            builder.set(.canDecrypt, canDecrypt)
            builder.set(.canDerive, canDerive)
            builder.set(.canSign, canSign)
            builder.set(.canVerify, canVerify)
            builder.set(.canWrap, canWrap)
            builder.set(.canUnwrap, canUnwrap)
            return try builder.build()
        }
    }
}
