/// The outer header of a KDBX 4 file: signatures, version, and the fields the key and the payload need.
///
/// Layout (KeePass's KDBX 4 format): 4-byte signature 1 `03 D9 A2 9A`, 4-byte signature 2 `67 FB 4B B5`,
/// minor then major version (2 bytes each), then fields of an id byte, a 4-byte size and the data, ended by id 0.
struct KDBXHeader {
    /// The payload cipher.
    enum Cipher: Equatable { case aes256, chacha20 }

    /// The minor version: 0 or 1 (4.0 or 4.1).
    let minorVersion: UInt16
    let cipher: Cipher
    /// Whether the payload is gzip-compressed.
    let compressed: Bool
    let masterSeed: [UInt8]
    let encryptionIV: [UInt8]
    let kdfParameters: KDBXVariantDictionary
    /// The header's bytes, from the signature to the end field's data: what its SHA-256 and HMAC cover.
    let bytes: [UInt8]

    /// The bytes that start every KDBX file.
    static let signature1: [UInt8] = [0x03, 0xD9, 0xA2, 0x9A]
    /// KDBX 2 to 4's second signature.
    static let signature2: [UInt8] = [0x67, 0xFB, 0x4B, 0xB5]
    /// KeePass 1.x's (KDB) second signature.
    static let signatureKDB: [UInt8] = [0x65, 0xFB, 0x4B, 0xB5]
    /// KeePass 2's pre-release second signature.
    static let signaturePreRelease: [UInt8] = [0x66, 0xFB, 0x4B, 0xB5]
    /// The most bytes a header may take.
    static let maximumByteCount = 1 << 20

    static let aes256UUID: [UInt8] = [0x31, 0xC1, 0xF2, 0xE6, 0xBF, 0x71, 0x43, 0x50, 0xBE, 0x58, 0x05, 0x21, 0x6A, 0xFC, 0x5A, 0xFF]
    static let chacha20UUID: [UInt8] = [0xD6, 0x03, 0x8A, 0x2B, 0x8B, 0x6F, 0x4C, 0xB5, 0xA5, 0x24, 0x33, 0x9A, 0x31, 0xDB, 0xB5, 0x9A]
    static let twofishUUID: [UInt8] = [0xAD, 0x68, 0xF2, 0x9F, 0x57, 0x6F, 0x4B, 0xB9, 0xA3, 0x6A, 0xD4, 0x7A, 0xF9, 0x65, 0x34, 0x6C]

    /// Reads the header at the start of `reader`, leaving it after the end field.
    ///
    /// - Throws: ``KDBXError/notKeePass``, ``KDBXError/unsupportedVersion(_:)`` naming KDBX 3.x, KDB or a newer
    ///   version, ``KDBXError/unsupportedAlgorithm(_:)``, ``KDBXError/damaged(_:)``.
    init(_ reader: inout KDBXByteReader) throws(KDBXError) {
        guard reader.bytes.starts(with: Self.signature1) else { throw .notKeePass }
        guard reader.bytes.count >= 12 else { throw .damaged("the file is \(reader.bytes.count) bytes, cut short inside its signature and version") }
        let second = Array(reader.bytes[4..<8])
        if second == Self.signatureKDB {
            throw .unsupportedVersion("a KeePass 1.x database (KDB) is not supported; open it in KeePass or KeePassXC and save it as KDBX 4")
        }
        guard second == Self.signature2 || second == Self.signaturePreRelease else { throw .notKeePass }
        _ = try reader.take(8, "the signature")
        let minor = try reader.uint16("the version")
        let major = try reader.uint16("the version")
        guard major == 4 else {
            if major == 3 || major == 2 || major == 1 {
                throw .unsupportedVersion("KDBX \(major).\(minor) is not supported; save it as KDBX 4 in KeePass/KeePassXC")
            }
            throw .unsupportedVersion("KDBX \(major).\(minor) is newer than kcf reads (KDBX 4.0 and 4.1)")
        }
        guard minor <= 1 else { throw .unsupportedVersion("KDBX 4.\(minor) is newer than kcf reads (KDBX 4.0 and 4.1)") }
        minorVersion = minor
        var fields: [UInt8: [UInt8]] = [:]
        while true {
            let id = try reader.uint8("a header field's id")
            let size = Int(try reader.uint32("a header field's size"))
            guard size <= Self.maximumByteCount else { throw .limitExceeded("a header field of \(size) bytes") }
            let data = try reader.take(size, "header field \(id)")
            guard reader.offset <= Self.maximumByteCount else { throw .limitExceeded("a header over \(Self.maximumByteCount) bytes") }
            if id == 0 { break }
            switch id {
            case 1, 12: continue  // a comment; public custom data (plugins'): neither affects reading.
            case 2, 3, 4, 7, 11:
                guard fields[id] == nil else { throw .damaged("the header gives field \(id) twice") }
                fields[id] = data
            case 5, 6, 8, 9, 10:
                throw .damaged("the header has KDBX 3's field \(id) in a KDBX 4 file")
            default:
                throw .damaged("the header has the unknown field \(id)")
            }
        }
        bytes = Array(reader.bytes[0..<reader.offset])
        func field(_ id: UInt8, _ name: String) throws(KDBXError) -> [UInt8] {
            guard let data = fields[id] else { throw .damaged("the header has no \(name) (field \(id))") }
            return data
        }
        switch try field(2, "cipher") {
        case Self.aes256UUID: cipher = .aes256
        case Self.chacha20UUID: cipher = .chacha20
        case Self.twofishUUID: throw .unsupportedAlgorithm("the payload cipher Twofish (a KeePass plugin's)")
        case let other: throw .unsupportedAlgorithm("the payload cipher \(KDBXHeader.uuidString(other))")
        }
        let compression = try field(3, "compression flag")
        guard compression.count == 4 else { throw .damaged("the compression flag is \(compression.count) bytes, not 4") }
        switch KDBXByteReader.littleEndian(compression) {
        case 0: compressed = false
        case 1: compressed = true
        case let other: throw .unsupportedAlgorithm("compression algorithm \(other)")
        }
        masterSeed = try field(4, "master seed")
        guard masterSeed.count == 32 else { throw .damaged("the master seed is \(masterSeed.count) bytes, not 32") }
        encryptionIV = try field(7, "encryption IV")
        let ivLength = cipher == .aes256 ? 16 : 12
        guard encryptionIV.count == ivLength else {
            throw .damaged("the encryption IV is \(encryptionIV.count) bytes; \(cipher == .aes256 ? "AES-256" : "ChaCha20") takes \(ivLength)")
        }
        kdfParameters = try KDBXVariantDictionary(try field(11, "KDF parameters"))
    }

    /// A UUID's bytes as text, for messages.
    static func uuidString(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF")
        let hex = bytes.map { String([digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]]) }
        guard hex.count == 16 else { return hex.joined() }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }
}
