#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An X.509 certificate, like Apple's `kSecClassCertificate` items. The certificate's DER is the item's
/// secret value (``der``); the fields a search needs are attributes.
///
/// Its primary key is ``certificateType``, ``issuer`` and ``serialNumber`` (with ``accessGroup`` and
/// ``synchronizable``). Create one from DER with ``init(der:label:accessGroup:accessible:synchronizable:)``,
/// which reads those fields from the certificate itself.
///
/// For example:
/// ```swift
/// let certificate = try Certificate(der: derBytes, label: "Ann's signing certificate")
/// print(certificate.publicKeyHash ?? [])  // SHA-1 of the public key, as Apple's keychain computes it
/// try keychain.add(certificate)
/// ```
public struct Certificate: KeychainItem {
    /// Certificates are items of class ``ItemClass/certificate``.
    public static let itemClass = ItemClass.certificate

    /// The X.509 version: 1, 2 or 3. Part of the primary key.
    public var certificateType: Int64
    /// The DER of the issuer Name. Part of the primary key.
    public var issuer: [UInt8]
    /// The content octets of the serial number INTEGER. Part of the primary key.
    public var serialNumber: [UInt8]
    /// The access group the item belongs to. Part of the primary key.
    public var accessGroup: String
    /// When the item may be read (stored; see ``Accessibility``).
    public var accessible: Accessibility
    /// Whether the item is synchronised between devices. Part of the primary key.
    public var synchronizable: Bool
    /// A label for people to read.
    public var label: String?
    /// The encoding of the certificate: 3 for DER.
    public var certificateEncoding: Int64
    /// The DER of the subject Name.
    public var subject: [UInt8]?
    /// The key identifier of the subject key identifier extension.
    public var subjectKeyID: [UInt8]?
    /// SHA-1 of the subjectPublicKey BIT STRING contents (Apple's public key hash); a private key's
    /// application label normally equals it.
    public var publicKeyHash: [UInt8]?
    /// When the item was added; set by the keychain.
    public internal(set) var creationDate: Date?
    /// When the item last changed; set by the keychain.
    public internal(set) var modificationDate: Date?
    /// The certificate's DER; `nil` when it was not loaded.
    public var value: [UInt8]?

    /// The certificate's DER, the same bytes as ``value``; `nil` when it was not loaded.
    public var der: [UInt8]? {
        get { value }
        set { value = newValue }
    }

    /// Creates a certificate item from fields given one by one (no DER is parsed).
    ///
    /// Prefer ``init(der:label:accessGroup:accessible:synchronizable:)``, which reads the fields from the
    /// certificate.
    ///
    /// - Parameters:
    ///   - certificateType: The X.509 version, 1…3; part of the primary key.
    ///   - issuer: The DER of the issuer Name; part of the primary key.
    ///   - serialNumber: The serial number's content octets; part of the primary key.
    ///   - accessGroup: The access group; part of the primary key.
    ///   - accessible: When the item may be read.
    ///   - synchronizable: Whether the item is synchronised; part of the primary key.
    ///   - label: A label for people.
    ///   - certificateEncoding: The encoding, 3 for DER.
    ///   - subject: The DER of the subject Name.
    ///   - subjectKeyID: The subject key identifier.
    ///   - publicKeyHash: SHA-1 of the public key bits.
    ///   - der: The certificate's DER.
    public init(
        certificateType: Int64 = 3, issuer: [UInt8], serialNumber: [UInt8],
        accessGroup: String = "", accessible: Accessibility = .whenUnlocked, synchronizable: Bool = false,
        label: String? = nil, certificateEncoding: Int64 = 3, subject: [UInt8]? = nil,
        subjectKeyID: [UInt8]? = nil, publicKeyHash: [UInt8]? = nil, der: [UInt8]? = nil
    ) {
        self.certificateType = certificateType
        self.issuer = issuer
        self.serialNumber = serialNumber
        self.accessGroup = accessGroup
        self.accessible = accessible
        self.synchronizable = synchronizable
        self.label = label
        self.certificateEncoding = certificateEncoding
        self.subject = subject
        self.subjectKeyID = subjectKeyID
        self.publicKeyHash = publicKeyHash
        self.value = der
    }

    /// Creates a certificate item from a DER-encoded X.509 certificate, reading subject, issuer, serial
    /// number, subject key identifier (when the extension is present), public key hash and version from it.
    ///
    /// For example:
    /// ```swift
    /// let certificate = try Certificate(der: derBytes, label: "example.com")
    /// assert(certificate.certificateType == 3)
    /// ```
    ///
    /// - Parameters:
    ///   - der: Exactly one DER-encoded certificate.
    ///   - label: A label for people.
    ///   - accessGroup: The access group; part of the primary key.
    ///   - accessible: When the item may be read.
    ///   - synchronizable: Whether the item is synchronised; part of the primary key.
    /// - Throws: `KeychainError.invalidParameter("certificate: <what> at byte <n>")` when `der` is not a
    ///   well-formed DER certificate.
    public init(
        der: [UInt8], label: String? = nil, accessGroup: String = "",
        accessible: Accessibility = .whenUnlocked, synchronizable: Bool = false
    ) throws(KeychainError) {
        let fields = try CertificateFields(der: der)
        self.init(
            certificateType: Int64(fields.version), issuer: fields.issuer, serialNumber: fields.serialNumber,
            accessGroup: accessGroup, accessible: accessible, synchronizable: synchronizable, label: label,
            certificateEncoding: 3, subject: fields.subject, subjectKeyID: fields.subjectKeyIdentifier,
            publicKeyHash: fields.publicKeyHash, der: der)
    }

    /// Creates a certificate item from stored attributes and, when loaded, its DER.
    ///
    /// Absent primary-key attributes read as their defaults (certificate type 3, empty bytes).
    ///
    /// - Parameters:
    ///   - attributes: Attributes of a certificate item.
    ///   - value: The certificate's DER, or `nil`.
    /// - Throws: `KeychainError.invalidParameter` when `attributes` are of another class.
    public init(attributes: ItemAttributes, value: [UInt8]?) throws(KeychainError) {
        try Self.requireClass(of: attributes)
        self.init(
            certificateType: attributes.integer(.certificateType) ?? 3, issuer: attributes.bytes(.issuer) ?? [],
            serialNumber: attributes.bytes(.serialNumber) ?? [], accessGroup: attributes.string(.accessGroup) ?? "",
            accessible: attributes.accessibility, synchronizable: attributes.boolean(.synchronizable) ?? false,
            label: attributes.string(.label), certificateEncoding: attributes.integer(.certificateEncoding) ?? 3,
            subject: attributes.bytes(.subject), subjectKeyID: attributes.bytes(.subjectKeyID),
            publicKeyHash: attributes.bytes(.publicKeyHash), der: value)
        creationDate = attributes.date(.creationDate)
        modificationDate = attributes.date(.modificationDate)
    }

    /// The item's attributes, checked, with the defaults of SPEC.md §8.2 added.
    ///
    /// - Throws: `KeychainError.invalidParameter` naming the field when ``certificateType`` is not 1…3 or
    ///   a bytes field is longer than 65,535 bytes.
    public var attributes: ItemAttributes {
        get throws(KeychainError) {
            var builder = AttributeBuilder(Self.itemClass)
            builder.setCommon(
                accessGroup: accessGroup, accessible: accessible, synchronizable: synchronizable, label: label,
                creationDate: creationDate, modificationDate: modificationDate)
            builder.set(.certificateType, certificateType)
            builder.set(.certificateEncoding, certificateEncoding)
            builder.set(.issuer, issuer)
            builder.set(.serialNumber, serialNumber)
            builder.set(.subject, subject)
            builder.set(.subjectKeyID, subjectKeyID)
            builder.set(.publicKeyHash, publicKeyHash)
            return try builder.build()
        }
    }
}
