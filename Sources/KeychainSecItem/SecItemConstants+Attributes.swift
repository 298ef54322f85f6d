// The attribute keys of Apple's SecItem dictionaries, with Apple's string values, for the attributes
// KeychainFile stores (SPEC.md §8.2). Source: Apple's Security framework,
// `Security/OSX/sec/Security/SecItemConstants.c` (repository apple-open-source/macos, commit
// 04b1b654a84a3c15e1420ab7913cbf701fa74cbc).

// MARK: Every class

/// When the item may be read (`"pdmn"`); the value is one of the `kSecAttrAccessible…` constants.
public let kSecAttrAccessible = "pdmn"
/// The item's access group (`"agrp"`): a `String`, part of every primary key.
public let kSecAttrAccessGroup = "agrp"
/// Whether the item is synchronised (`"sync"`): a Boolean, or `kSecAttrSynchronizableAny` in queries.
public let kSecAttrSynchronizable = "sync"
/// A label for people (`"labl"`): a `String`.
public let kSecAttrLabel = "labl"
/// When the item was added (`"cdat"`): a `Date`, set by the keychain; may be matched in queries.
public let kSecAttrCreationDate = "cdat"
/// When the item last changed (`"mdat"`): a `Date`, set by the keychain; may be matched in queries.
public let kSecAttrModificationDate = "mdat"

// MARK: Passwords

/// The account name (`"acct"`): a `String`.
public let kSecAttrAccount = "acct"
/// The service (`"svce"`): a `String`; generic passwords only.
public let kSecAttrService = "svce"
/// Application-defined bytes (`"gena"`): `Data`; generic passwords only.
public let kSecAttrGeneric = "gena"
/// A description of the kind of item (`"desc"`): a `String`.
public let kSecAttrDescription = "desc"
/// A comment (`"icmt"`): a `String`.
public let kSecAttrComment = "icmt"
/// The creator's four-character code (`"crtr"`): a number, or a four-character `String`.
public let kSecAttrCreator = "crtr"
/// The item's type (`"type"`): for passwords a four-character code (a number, or a four-character
/// `String`); for keys the algorithm (`kSecAttrKeyTypeRSA`, …), as Apple uses the same key for both.
public let kSecAttrType = "type"
/// Whether people browsing the keychain should not see the item (`"invi"`): a Boolean.
public let kSecAttrIsInvisible = "invi"
/// Whether the item means "no password exists" (`"nega"`): a Boolean.
public let kSecAttrIsNegative = "nega"

// MARK: Internet passwords

/// The server (`"srvr"`): a `String`.
public let kSecAttrServer = "srvr"
/// The security domain, such as an HTTP realm (`"sdmn"`): a `String`.
public let kSecAttrSecurityDomain = "sdmn"
/// The protocol (`"ptcl"`): one of the `kSecAttrProtocol…` constants (or a number).
public let kSecAttrProtocol = "ptcl"
/// The authentication scheme (`"atyp"`): one of the `kSecAttrAuthenticationType…` constants (or a number).
public let kSecAttrAuthenticationType = "atyp"
/// The port (`"port"`): an integer 0…65,535.
public let kSecAttrPort = "port"
/// The path (`"path"`): a `String`.
public let kSecAttrPath = "path"

// MARK: Certificates

/// The X.509 version (`"ctyp"`): an integer, read from the DER on add.
public let kSecAttrCertificateType = "ctyp"
/// The certificate's encoding (`"cenc"`): an integer, 3 for DER.
public let kSecAttrCertificateEncoding = "cenc"
/// The DER of the subject Name (`"subj"`): `Data`, read from the DER on add.
public let kSecAttrSubject = "subj"
/// The DER of the issuer Name (`"issr"`): `Data`, read from the DER on add.
public let kSecAttrIssuer = "issr"
/// The serial number's content octets (`"slnr"`): `Data`, read from the DER on add.
public let kSecAttrSerialNumber = "slnr"
/// The subject key identifier (`"skid"`): `Data`, read from the DER on add.
public let kSecAttrSubjectKeyID = "skid"
/// SHA-1 of the certificate's public key (`"pkhh"`): `Data`, computed from the DER on add.
public let kSecAttrPublicKeyHash = "pkhh"

// MARK: Keys

/// Public, private or symmetric (`"kcls"`): one of the `kSecAttrKeyClass…` constants (or 0, 1, 2).
public let kSecAttrKeyClass = "kcls"
/// Bytes that identify the key (`"klbl"`): `Data`; for a private key, its certificate's public key hash.
public let kSecAttrApplicationLabel = "klbl"
/// Application-defined bytes (`"atag"`): `Data` (a `String` is stored as its UTF-8 bytes, as Apple does).
public let kSecAttrApplicationTag = "atag"
/// The key's algorithm (`"type"`): one of the `kSecAttrKeyType…` constants (or a number). Same key as
/// `kSecAttrType`.
public let kSecAttrKeyType = "type"
/// The key size in bits (`"bsiz"`): an integer.
public let kSecAttrKeySizeInBits = "bsiz"
/// The effective key size in bits (`"esiz"`): an integer.
public let kSecAttrEffectiveKeySize = "esiz"
/// Whether the key is stored permanently (`"perm"`): a Boolean.
public let kSecAttrIsPermanent = "perm"
/// Whether the key may encrypt (`"encr"`): a Boolean.
public let kSecAttrCanEncrypt = "encr"
/// Whether the key may decrypt (`"decr"`): a Boolean.
public let kSecAttrCanDecrypt = "decr"
/// Whether the key may derive other keys (`"drve"`): a Boolean.
public let kSecAttrCanDerive = "drve"
/// Whether the key may sign (`"sign"`): a Boolean.
public let kSecAttrCanSign = "sign"
/// Whether the key may verify signatures (`"vrfy"`): a Boolean.
public let kSecAttrCanVerify = "vrfy"
/// Whether the key may wrap other keys (`"wrap"`): a Boolean.
public let kSecAttrCanWrap = "wrap"
/// Whether the key may unwrap other keys (`"unwp"`): a Boolean.
public let kSecAttrCanUnwrap = "unwp"
