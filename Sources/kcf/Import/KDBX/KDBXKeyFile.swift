import Foundation
import KeychainCrypto

/// The key of a KeePass key file, the second part of a composite key (KeePass's "key file" formats):
///
/// - an XML key file (`<KeyFile><Meta><Version>`): version 2.0 holds the key as hex in `<Key><Data Hash="…">`,
///   checked against the first 4 bytes of its SHA-256; version 1.0 holds it as base64;
/// - a file of exactly 32 bytes is the key; a file of 64 hexadecimal digits is the key in hex;
/// - any other file is hashed: its SHA-256 is the key.
enum KDBXKeyFile {
    /// The 32-byte (or, for a version 1.0 XML file, stored) key of a key file's bytes.
    ///
    /// - Throws: ``KDBXError/damaged(_:)`` for an XML key file whose data is not hex or base64 or whose hash does
    ///   not match; ``KDBXError/unsupportedVersion(_:)`` for another XML key file version.
    static func key(_ bytes: [UInt8]) throws(KDBXError) -> [UInt8] {
        if let document = try? XMLReader.parse(bytes), document.name == "KeyFile" {
            return try xmlKey(document)
        }
        if bytes.count == 32 { return bytes }
        if bytes.count == 64, let decoded = hex(String(decoding: bytes, as: UTF8.self)) { return decoded }
        return Array(SHA256.hash(data: bytes))
    }

    private static func xmlKey(_ document: XMLTreeElement) throws(KDBXError) -> [UInt8] {
        let version = document.child("Meta")?.child("Version")?.text.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard let data = document.child("Key")?.child("Data") else { throw .damaged("the XML key file has no <Key><Data>") }
        let text = data.text.filter { !$0.isWhitespace }
        if version.hasPrefix("1.") {
            guard let key = Data(base64Encoded: text) else { throw .damaged("the key file's data is not base64") }
            return [UInt8](key)
        }
        guard version.hasPrefix("2.") else { throw .unsupportedVersion("key file version \(version) is not read (1.0 and 2.0 are)") }
        guard let key = hex(text) else { throw .damaged("the key file's data is not hexadecimal") }
        if let hash = data.attribute("Hash") {
            guard hex(hash.filter { !$0.isWhitespace }) == Array(SHA256.hash(data: key).prefix(4)) else {
                throw .damaged("the key file's data does not match its hash (the file was altered)")
            }
        }
        return key
    }

    /// The bytes of hexadecimal text, or `nil` when it is not an even number of hex digits.
    private static func hex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
