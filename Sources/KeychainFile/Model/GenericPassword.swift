#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A password for an application or service, like Apple's `kSecClassGenericPassword` items.
///
/// Its primary key is ``service`` and ``account`` (with ``accessGroup`` and ``synchronizable``): two
/// generic passwords in one keychain cannot share all four.
///
/// For example:
/// ```swift
/// var item = GenericPassword(service: "mail.example.com", account: "ann", password: "s3cret")
/// item.label = "Mail for Ann"
/// try keychain.add(item)
/// ```
public struct GenericPassword: KeychainItem {
    /// Generic passwords are items of class ``ItemClass/genericPassword``.
    public static let itemClass = ItemClass.genericPassword

    /// The service the password is for. Part of the primary key.
    public var service: String
    /// The account name. Part of the primary key.
    public var account: String
    /// The access group the item belongs to. Part of the primary key.
    public var accessGroup: String
    /// When the item may be read (stored; see ``Accessibility``).
    public var accessible: Accessibility
    /// Whether the item is synchronised between devices. Part of the primary key.
    public var synchronizable: Bool
    /// A label for people to read.
    public var label: String?
    /// Application-defined bytes.
    public var generic: [UInt8]?
    /// A description of the kind of item, for people (the "description" attribute).
    public var itemDescription: String?
    /// A comment for people to read.
    public var comment: String?
    /// The creator's four-character code.
    public var creator: UInt32?
    /// The item's four-character type code (the "type" attribute).
    public var itemType: UInt32?
    /// Whether the item should be hidden from people browsing the keychain.
    public var isInvisible: Bool?
    /// Whether the item is a placeholder meaning "no password exists".
    public var isNegative: Bool?
    /// When the item was added; set by the keychain.
    public internal(set) var creationDate: Date?
    /// When the item last changed; set by the keychain.
    public internal(set) var modificationDate: Date?
    /// The password's bytes; `nil` when it was not loaded.
    public var value: [UInt8]?

    /// Creates a generic password.
    ///
    /// For example:
    /// ```swift
    /// let item = GenericPassword(service: "backup", account: "server-1", value: tokenBytes)
    /// ```
    ///
    /// - Parameters:
    ///   - service: The service; part of the primary key.
    ///   - account: The account; part of the primary key.
    ///   - accessGroup: The access group; part of the primary key.
    ///   - accessible: When the item may be read.
    ///   - synchronizable: Whether the item is synchronised; part of the primary key.
    ///   - label: A label for people.
    ///   - generic: Application-defined bytes.
    ///   - itemDescription: A description of the kind of item.
    ///   - comment: A comment.
    ///   - creator: The creator's four-character code.
    ///   - itemType: The item's four-character type code.
    ///   - isInvisible: Whether to hide the item from people browsing.
    ///   - isNegative: Whether the item means "no password exists".
    ///   - value: The password's bytes.
    public init(
        service: String = "", account: String = "",
        accessGroup: String = "", accessible: Accessibility = .whenUnlocked, synchronizable: Bool = false,
        label: String? = nil, generic: [UInt8]? = nil, itemDescription: String? = nil, comment: String? = nil,
        creator: UInt32? = nil, itemType: UInt32? = nil, isInvisible: Bool? = nil, isNegative: Bool? = nil,
        value: [UInt8]? = nil
    ) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.accessible = accessible
        self.synchronizable = synchronizable
        self.label = label
        self.generic = generic
        self.itemDescription = itemDescription
        self.comment = comment
        self.creator = creator
        self.itemType = itemType
        self.isInvisible = isInvisible
        self.isNegative = isNegative
        self.value = value
    }

    /// Creates a generic password whose secret is the UTF-8 of `password`.
    ///
    /// For example:
    /// ```swift
    /// let item = GenericPassword(service: "mail", account: "ann", password: "s3cret")
    /// ```
    ///
    /// - Parameters:
    ///   - service: The service; part of the primary key.
    ///   - account: The account; part of the primary key.
    ///   - password: The password, stored as UTF-8.
    ///   - accessGroup: The access group; part of the primary key.
    ///   - accessible: When the item may be read.
    ///   - synchronizable: Whether the item is synchronised; part of the primary key.
    ///   - label: A label for people.
    public init(
        service: String, account: String, password: String,
        accessGroup: String = "", accessible: Accessibility = .whenUnlocked, synchronizable: Bool = false,
        label: String? = nil
    ) {
        self.init(
            service: service, account: account, accessGroup: accessGroup, accessible: accessible,
            synchronizable: synchronizable, label: label, value: Array(password.utf8))
    }

    /// Creates a generic password from stored attributes and, when loaded, its secret.
    ///
    /// Absent primary-key attributes read as their defaults (empty strings).
    ///
    /// - Parameters:
    ///   - attributes: Attributes of a generic password item.
    ///   - value: The password's bytes, or `nil`.
    /// - Throws: `KeychainError.invalidParameter` when `attributes` are of another class.
    public init(attributes: ItemAttributes, value: [UInt8]?) throws(KeychainError) {
        try Self.requireClass(of: attributes)
        // Read in increasing tag order: one pass over the attributes.
        var reader = ItemAttributes.ForwardReader(attributes)
        let common = reader.common()
        let account = reader.string(.account) ?? ""
        let service = reader.string(.service) ?? ""
        let generic = reader.bytes(.generic)
        let password = reader.passwordCommon()
        self.init(
            service: service, account: account, accessGroup: common.accessGroup, accessible: common.accessible,
            synchronizable: common.synchronizable, label: common.label, generic: generic,
            itemDescription: password.itemDescription, comment: password.comment, creator: password.creator,
            itemType: password.itemType, isInvisible: password.isInvisible, isNegative: password.isNegative, value: value)
        creationDate = common.creationDate
        modificationDate = common.modificationDate
    }

    /// The item's attributes, checked, with the defaults of SPEC.md §8.2 added.
    ///
    /// - Throws: `KeychainError.invalidParameter` naming the field when a string is longer than 65,535
    ///   bytes of UTF-8 or `generic` longer than 65,535 bytes.
    public var attributes: ItemAttributes {
        get throws(KeychainError) {
            var builder = AttributeBuilder(Self.itemClass)
            builder.setCommon(
                accessGroup: accessGroup, accessible: accessible, synchronizable: synchronizable, label: label,
                creationDate: creationDate, modificationDate: modificationDate)
            builder.setPasswordCommon(
                itemDescription: itemDescription, comment: comment, creator: creator, itemType: itemType,
                isInvisible: isInvisible, isNegative: isNegative)
            builder.set(.service, service)
            builder.set(.account, account)
            builder.set(.generic, generic)
            return try builder.build()
        }
    }

    /// The password as text: the secret decoded as UTF-8, or `nil` when it is not loaded or not valid UTF-8.
    /// Setting it stores the UTF-8 of the new text (or removes the secret for `nil`).
    ///
    /// For example:
    /// ```swift
    /// var item = GenericPassword(service: "mail", account: "ann", password: "old")
    /// item.password = "new"
    /// ```
    public var password: String? {
        get { value.flatMap { String(validating: $0, as: UTF8.self) } }
        set { value = newValue.map { Array($0.utf8) } }
    }

    /// The same as ``password``, under its first name.
    public var passwordString: String? {
        get { password }
        set { password = newValue }
    }
}
