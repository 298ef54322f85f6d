import KeychainFile

/// Apple's four-character names for item classes and attributes (the `kSecAttr…` values `security`
/// prints), and the type each is shown with.
enum AttributeCodes {
    /// How `security` labels a value's type.
    enum Kind: String {
        /// Text or bytes.
        case blob = "<blob>"
        /// An unsigned 32-bit value: shown as four characters when they are printable, else in hex.
        case uint32 = "<uint32>"
        /// A signed 32-bit value, such as a flag.
        case sint32 = "<sint32>"
        /// A date, as `YYYYMMDDhhmmssZ`.
        case timedate = "<timedate>"
    }

    /// The class as `security` names it: `genp`, `inet`, `cert`, `keys`.
    static func code(of itemClass: ItemClass) -> String {
        switch itemClass {
        case .genericPassword: return "genp"
        case .internetPassword: return "inet"
        case .certificate: return "cert"
        case .key: return "keys"
        }
    }

    /// The attribute's four-character name, or its library name for one Apple has no code for.
    static func code(of attribute: Attribute) -> String {
        codes[attribute] ?? attribute.name
    }

    /// How the attribute's value is shown.
    static func kind(of attribute: Attribute) -> Kind {
        switch attribute.type {
        case .string, .bytes: return .blob
        case .date: return .timedate
        case .boolean: return .sint32
        case .integer: return .uint32
        }
    }

    /// Whether an integer attribute holds a four-character code (shown and parsed as text).
    static func isFourCharacterCode(_ attribute: Attribute) -> Bool {
        attribute == .creator || attribute == .itemType || attribute == .protocolType
            || attribute == .authenticationType
    }

    private static let codes: [Attribute: String] = [
        .accessGroup: "agrp", .accessible: "pdmn", .synchronizable: "sync", .label: "labl",
        .creationDate: "cdat", .modificationDate: "mdat", .account: "acct", .service: "svce",
        .generic: "gena", .itemDescription: "desc", .comment: "icmt", .creator: "crtr", .itemType: "type",
        .isInvisible: "invi", .isNegative: "nega", .server: "srvr", .securityDomain: "sdmn",
        .protocolType: "ptcl", .authenticationType: "atyp", .port: "port", .path: "path",
        .certificateType: "ctyp", .certificateEncoding: "cenc", .subject: "subj", .issuer: "issr",
        .serialNumber: "slnr", .subjectKeyID: "skid", .publicKeyHash: "pkhh", .keyClass: "kcls",
        .applicationLabel: "klbl", .applicationTag: "atag", .keyType: "type", .keySizeInBits: "bsiz",
        .effectiveKeySize: "esiz", .isPermanent: "perm", .canEncrypt: "encr", .canDecrypt: "decr",
        .canDerive: "drve", .canSign: "sign", .canVerify: "vrfy", .canWrap: "wrap", .canUnwrap: "unwp",
    ]
}
