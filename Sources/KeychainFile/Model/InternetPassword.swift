#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A password for an internet server, like Apple's `kSecClassInternetPassword` items.
///
/// Its primary key is ``server``, ``account``, ``securityDomain``, ``protocolType``,
/// ``authenticationType``, ``port`` and ``path`` (with ``accessGroup`` and ``synchronizable``).
///
/// For example:
/// ```swift
/// let item = InternetPassword(
///     server: "example.com", account: "ann", password: "s3cret", protocolType: .https, port: 443)
/// try keychain.add(item)
/// ```
public struct InternetPassword: KeychainItem {
    /// Internet passwords are items of class ``ItemClass/internetPassword``.
    public static let itemClass = ItemClass.internetPassword

    /// The server's domain name or address. Part of the primary key.
    public var server: String
    /// The account name. Part of the primary key.
    public var account: String
    /// The security domain, such as an HTTP realm. Part of the primary key.
    public var securityDomain: String
    /// The protocol (the "protocol" attribute). Part of the primary key.
    public var protocolType: InternetProtocol
    /// The authentication scheme. Part of the primary key.
    public var authenticationType: InternetAuthenticationType
    /// The port number; 0 when unspecified. Part of the primary key.
    public var port: UInt16
    /// The path on the server. Part of the primary key.
    public var path: String
    /// The access group the item belongs to. Part of the primary key.
    public var accessGroup: String
    /// When the item may be read (stored; see ``Accessibility``).
    public var accessible: Accessibility
    /// Whether the item is synchronised between devices. Part of the primary key.
    public var synchronizable: Bool
    /// A label for people to read.
    public var label: String?
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

    /// Creates an internet password.
    ///
    /// For example:
    /// ```swift
    /// let item = InternetPassword(server: "ftp.example.com", account: "ann", protocolType: .ftp, value: bytes)
    /// ```
    ///
    /// - Parameters:
    ///   - server: The server; part of the primary key.
    ///   - account: The account; part of the primary key.
    ///   - securityDomain: The security domain; part of the primary key.
    ///   - protocolType: The protocol; part of the primary key. Default: ``InternetProtocol/any`` (0).
    ///   - authenticationType: The authentication scheme; part of the primary key. Default:
    ///     ``InternetAuthenticationType/any`` (0).
    ///   - port: The port, 0 when unspecified; part of the primary key.
    ///   - path: The path; part of the primary key.
    ///   - accessGroup: The access group; part of the primary key.
    ///   - accessible: When the item may be read.
    ///   - synchronizable: Whether the item is synchronised; part of the primary key.
    ///   - label: A label for people.
    ///   - itemDescription: A description of the kind of item.
    ///   - comment: A comment.
    ///   - creator: The creator's four-character code.
    ///   - itemType: The item's four-character type code.
    ///   - isInvisible: Whether to hide the item from people browsing.
    ///   - isNegative: Whether the item means "no password exists".
    ///   - value: The password's bytes.
    public init(
        server: String = "", account: String = "", securityDomain: String = "",
        protocolType: InternetProtocol = .any, authenticationType: InternetAuthenticationType = .any,
        port: UInt16 = 0, path: String = "",
        accessGroup: String = "", accessible: Accessibility = .whenUnlocked, synchronizable: Bool = false,
        label: String? = nil, itemDescription: String? = nil, comment: String? = nil,
        creator: UInt32? = nil, itemType: UInt32? = nil, isInvisible: Bool? = nil, isNegative: Bool? = nil,
        value: [UInt8]? = nil
    ) {
        self.server = server
        self.account = account
        self.securityDomain = securityDomain
        self.protocolType = protocolType
        self.authenticationType = authenticationType
        self.port = port
        self.path = path
        self.accessGroup = accessGroup
        self.accessible = accessible
        self.synchronizable = synchronizable
        self.label = label
        self.itemDescription = itemDescription
        self.comment = comment
        self.creator = creator
        self.itemType = itemType
        self.isInvisible = isInvisible
        self.isNegative = isNegative
        self.value = value
    }

    /// Creates an internet password whose secret is the UTF-8 of `password`.
    ///
    /// For example:
    /// ```swift
    /// let item = InternetPassword(server: "example.com", account: "ann", password: "s3cret", protocolType: .https)
    /// ```
    ///
    /// - Parameters:
    ///   - server: The server; part of the primary key.
    ///   - account: The account; part of the primary key.
    ///   - password: The password, stored as UTF-8.
    ///   - securityDomain: The security domain; part of the primary key.
    ///   - protocolType: The protocol; part of the primary key.
    ///   - authenticationType: The authentication scheme; part of the primary key.
    ///   - port: The port, 0 when unspecified; part of the primary key.
    ///   - path: The path; part of the primary key.
    ///   - accessGroup: The access group; part of the primary key.
    ///   - accessible: When the item may be read.
    ///   - synchronizable: Whether the item is synchronised; part of the primary key.
    ///   - label: A label for people.
    public init(
        server: String, account: String, password: String, securityDomain: String = "",
        protocolType: InternetProtocol = .any, authenticationType: InternetAuthenticationType = .any,
        port: UInt16 = 0, path: String = "", accessGroup: String = "", accessible: Accessibility = .whenUnlocked,
        synchronizable: Bool = false, label: String? = nil
    ) {
        self.init(
            server: server, account: account, securityDomain: securityDomain, protocolType: protocolType,
            authenticationType: authenticationType, port: port, path: path, accessGroup: accessGroup,
            accessible: accessible, synchronizable: synchronizable, label: label, value: Array(password.utf8))
    }

    /// Creates an internet password from stored attributes and, when loaded, its secret.
    ///
    /// Absent primary-key attributes read as their defaults (empty strings, 0).
    ///
    /// - Parameters:
    ///   - attributes: Attributes of an internet password item.
    ///   - value: The password's bytes, or `nil`.
    /// - Throws: `KeychainError.invalidParameter` when `attributes` are of another class.
    public init(attributes: ItemAttributes, value: [UInt8]?) throws(KeychainError) {
        try Self.requireClass(of: attributes)
        // Read in increasing tag order: one pass over the attributes.
        var reader = ItemAttributes.ForwardReader(attributes)
        let common = reader.common()
        let account = reader.string(.account) ?? ""
        let password = reader.passwordCommon()
        let server = reader.string(.server) ?? ""
        let securityDomain = reader.string(.securityDomain) ?? ""
        let protocolType = InternetProtocol(rawValue: reader.code(.protocolType) ?? 0)
        let authenticationType = InternetAuthenticationType(rawValue: reader.code(.authenticationType) ?? 0)
        let port = reader.integer(.port).flatMap { UInt16(exactly: $0) } ?? 0
        let path = reader.string(.path) ?? ""
        self.init(
            server: server, account: account, securityDomain: securityDomain, protocolType: protocolType,
            authenticationType: authenticationType, port: port, path: path, accessGroup: common.accessGroup,
            accessible: common.accessible, synchronizable: common.synchronizable, label: common.label,
            itemDescription: password.itemDescription, comment: password.comment, creator: password.creator,
            itemType: password.itemType, isInvisible: password.isInvisible, isNegative: password.isNegative, value: value)
        creationDate = common.creationDate
        modificationDate = common.modificationDate
    }

    /// The item's attributes, checked, with the defaults of SPEC.md §8.2 added.
    ///
    /// - Throws: `KeychainError.invalidParameter` naming the field when a string is longer than 65,535
    ///   bytes of UTF-8.
    public var attributes: ItemAttributes {
        get throws(KeychainError) {
            var builder = AttributeBuilder(Self.itemClass)
            builder.setCommon(
                accessGroup: accessGroup, accessible: accessible, synchronizable: synchronizable, label: label,
                creationDate: creationDate, modificationDate: modificationDate)
            builder.setPasswordCommon(
                itemDescription: itemDescription, comment: comment, creator: creator, itemType: itemType,
                isInvisible: isInvisible, isNegative: isNegative)
            builder.set(.server, server)
            builder.set(.account, account)
            builder.set(.securityDomain, securityDomain)
            builder.set(.protocolType, protocolType.rawValue)
            builder.set(.authenticationType, authenticationType.rawValue)
            builder.set(.port, Int64(port))
            builder.set(.path, path)
            return try builder.build()
        }
    }

    /// The password as text: the secret decoded as UTF-8, or `nil` when it is not loaded or not valid UTF-8.
    /// Setting it stores the UTF-8 of the new text (or removes the secret for `nil`).
    ///
    /// For example:
    /// ```swift
    /// var item = InternetPassword(server: "example.com", account: "ann", password: "old")
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
