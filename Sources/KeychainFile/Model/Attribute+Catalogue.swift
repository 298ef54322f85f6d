// The attribute table of SPEC.md §8.2, one constant per row, in tag order. The class lists are named after
// the table's "classes" column: G generic password, I internet password, C certificate, K key.

// Each list is a mask with bit (code − 1) set per class, as `Attribute.bit(for:)` computes it. Masks made of
// constants (not arrays reduced at run time) let the compiler lay out every attribute below ahead of time,
// so that using one is not a call to build it on first use.
private let g: UInt8 = 0b0001
private let i: UInt8 = 0b0010
private let c: UInt8 = 0b0100
private let k: UInt8 = 0b1000
private let gi: UInt8 = g | i
private let gick: UInt8 = g | i | c | k

extension Attribute {
    /// The access group the item belongs to; part of every primary key. Default: empty.
    public static let accessGroup = Attribute(tag: 0x0001, name: "accessGroup", type: .string, classes: gick)
    /// When the item may be read, as an ``Accessibility`` raw value 1…7. Default: 1 (when unlocked).
    public static let accessible = Attribute(
        tag: 0x0002, name: "accessible", type: .integer, classes: gick, range: 1...7)
    /// Whether the item is synchronised between devices; part of every primary key. Default: false.
    public static let synchronizable = Attribute(tag: 0x0003, name: "synchronizable", type: .boolean, classes: gick)
    /// A label for people to read.
    public static let label = Attribute(tag: 0x0004, name: "label", type: .string, classes: gick)
    /// When the item was added; set by the keychain.
    public static let creationDate = Attribute(tag: 0x0005, name: "creationDate", type: .date, classes: gick)
    /// When the item last changed; set by the keychain.
    public static let modificationDate = Attribute(tag: 0x0006, name: "modificationDate", type: .date, classes: gick)
    /// The account name; part of the primary key of generic and internet passwords.
    public static let account = Attribute(tag: 0x0101, name: "account", type: .string, classes: gi)
    /// The service the password is for; part of the primary key of generic passwords.
    public static let service = Attribute(tag: 0x0102, name: "service", type: .string, classes: g)
    /// Application-defined bytes.
    public static let generic = Attribute(tag: 0x0103, name: "generic", type: .bytes, classes: g)
    /// A description of the kind of item, for people (the attribute named "description").
    public static let itemDescription = Attribute(tag: 0x0104, name: "description", type: .string, classes: gi)
    /// A comment for people to read.
    public static let comment = Attribute(tag: 0x0105, name: "comment", type: .string, classes: gi)
    /// The creator's four-character code, 0 … 2³²−1.
    public static let creator = Attribute(
        tag: 0x0106, name: "creator", type: .integer, classes: gi, range: 0...0xFFFF_FFFF)
    /// The item's four-character type code, 0 … 2³²−1 (the attribute named "type").
    public static let itemType = Attribute(
        tag: 0x0107, name: "type", type: .integer, classes: gi, range: 0...0xFFFF_FFFF)
    /// Whether the item should be hidden from people browsing the keychain.
    public static let isInvisible = Attribute(tag: 0x0108, name: "isInvisible", type: .boolean, classes: gi)
    /// Whether the item is a placeholder meaning "no password exists".
    public static let isNegative = Attribute(tag: 0x0109, name: "isNegative", type: .boolean, classes: gi)
    /// The server's domain name or address; part of the primary key of internet passwords.
    public static let server = Attribute(tag: 0x0201, name: "server", type: .string, classes: i)
    /// The security domain (for example an HTTP realm); part of the primary key of internet passwords.
    public static let securityDomain = Attribute(tag: 0x0202, name: "securityDomain", type: .string, classes: i)
    /// The protocol's four-character code, 0 … 2³²−1 (the attribute named "protocol"); part of the primary key of
    /// internet passwords.
    public static let protocolType = Attribute(
        tag: 0x0203, name: "protocol", type: .integer, classes: i, range: 0...0xFFFF_FFFF)
    /// The authentication scheme's four-character code, 0 … 2³²−1; part of the primary key of internet passwords.
    public static let authenticationType = Attribute(
        tag: 0x0204, name: "authenticationType", type: .integer, classes: i, range: 0...0xFFFF_FFFF)
    /// The port number, 0 … 65,535; part of the primary key of internet passwords.
    public static let port = Attribute(tag: 0x0205, name: "port", type: .integer, classes: i, range: 0...65_535)
    /// The path on the server; part of the primary key of internet passwords.
    public static let path = Attribute(tag: 0x0206, name: "path", type: .string, classes: i)
    /// The X.509 version: 1, 2 or 3; part of the primary key of certificates.
    public static let certificateType = Attribute(
        tag: 0x0301, name: "certificateType", type: .integer, classes: c, range: 0...3)
    /// The certificate's encoding: 3 for DER.
    public static let certificateEncoding = Attribute(
        tag: 0x0302, name: "certificateEncoding", type: .integer, classes: c, range: 0...0xFFFF_FFFF)
    /// The DER of the certificate's subject Name.
    public static let subject = Attribute(tag: 0x0303, name: "subject", type: .bytes, classes: c)
    /// The DER of the certificate's issuer Name; part of the primary key of certificates.
    public static let issuer = Attribute(tag: 0x0304, name: "issuer", type: .bytes, classes: c)
    /// The content octets of the certificate's serial number INTEGER; part of the primary key of certificates.
    public static let serialNumber = Attribute(tag: 0x0305, name: "serialNumber", type: .bytes, classes: c)
    /// The key identifier of the certificate's subject key identifier extension.
    public static let subjectKeyID = Attribute(tag: 0x0306, name: "subjectKeyID", type: .bytes, classes: c)
    /// SHA-1 of the certificate's subjectPublicKey BIT STRING contents, as Apple's keychain computes it.
    public static let publicKeyHash = Attribute(tag: 0x0307, name: "publicKeyHash", type: .bytes, classes: c)
    /// 0 public, 1 private, 2 symmetric (``KeyClass``); part of the primary key of keys.
    public static let keyClass = Attribute(tag: 0x0401, name: "keyClass", type: .integer, classes: k, range: 0...2)
    /// Bytes that identify the key; for a private key, normally its certificate's public key hash. Part of the primary
    /// key of keys.
    public static let applicationLabel = Attribute(tag: 0x0402, name: "applicationLabel", type: .bytes, classes: k)
    /// Application-defined bytes; part of the primary key of keys.
    public static let applicationTag = Attribute(tag: 0x0403, name: "applicationTag", type: .bytes, classes: k)
    /// The algorithm: 42 RSA, 73 elliptic curve (Apple's codes), others free; part of the primary key of keys.
    public static let keyType = Attribute(tag: 0x0404, name: "keyType", type: .integer, classes: k, range: 0...0xFFFF_FFFF)
    /// The key size in bits; part of the primary key of keys.
    public static let keySizeInBits = Attribute(tag: 0x0405, name: "keySizeInBits", type: .integer, classes: k, range: 0...0x7FFF_FFFF)
    /// The effective key size in bits; part of the primary key of keys.
    public static let effectiveKeySize = Attribute(tag: 0x0406, name: "effectiveKeySize", type: .integer, classes: k, range: 0...0x7FFF_FFFF)
    /// Whether the key is stored permanently.
    public static let isPermanent = Attribute(tag: 0x0407, name: "isPermanent", type: .boolean, classes: k)
    /// Whether the key may encrypt.
    public static let canEncrypt = Attribute(tag: 0x0408, name: "canEncrypt", type: .boolean, classes: k)
    /// Whether the key may decrypt.
    public static let canDecrypt = Attribute(tag: 0x0409, name: "canDecrypt", type: .boolean, classes: k)
    /// Whether the key may derive other keys.
    public static let canDerive = Attribute(tag: 0x040A, name: "canDerive", type: .boolean, classes: k)
    /// Whether the key may sign.
    public static let canSign = Attribute(tag: 0x040B, name: "canSign", type: .boolean, classes: k)
    /// Whether the key may verify signatures.
    public static let canVerify = Attribute(tag: 0x040C, name: "canVerify", type: .boolean, classes: k)
    /// Whether the key may wrap other keys.
    public static let canWrap = Attribute(tag: 0x040D, name: "canWrap", type: .boolean, classes: k)
    /// Whether the key may unwrap other keys.
    public static let canUnwrap = Attribute(tag: 0x040E, name: "canUnwrap", type: .boolean, classes: k)

    /// Every attribute of SPEC.md §8.2, in increasing tag order.
    public static let all: [Attribute] = [
        .accessGroup, .accessible, .synchronizable, .label, .creationDate, .modificationDate, .account, .service,
        .generic, .itemDescription, .comment, .creator, .itemType, .isInvisible, .isNegative, .server,
        .securityDomain, .protocolType, .authenticationType, .port, .path, .certificateType, .certificateEncoding,
        .subject, .issuer, .serialNumber, .subjectKeyID, .publicKeyHash, .keyClass, .applicationLabel,
        .applicationTag, .keyType, .keySizeInBits, .effectiveKeySize, .isPermanent, .canEncrypt, .canDecrypt,
        .canDerive, .canSign, .canVerify, .canWrap, .canUnwrap,
    ]
}
