import Foundation
import KeychainCrypto
import KeychainFile

/// Items as JSON, for `--json`:
///
/// ```json
/// {"class": "internetPassword", "id": "…", "attributes": {"account": "ann", "protocol": "https", "accessible": "whenUnlocked", …}}
/// ```
///
/// Attributes are named by the library's names. Values that are codes are named (``AttributeValueNames``:
/// accessibility, key class and type, protocol, authentication type, certificate type and encoding); other
/// four-character codes are their four characters; strings stay strings; a certificate's subject and issuer
/// are RFC 4514 text (``DistinguishedName``); other bytes are lowercase hex; dates are ISO 8601 in UTC with
/// milliseconds. A certificate whose DER is at hand also gets `notBefore` and `notAfter` (ISO 8601) and its
/// `sha1` and `sha256` fingerprints. The secret appears only when asked for, as `secretBase64` and, when it is
/// UTF-8 text, also as `secret`.
enum ItemJSON {
    /// The JSON object for one item.
    ///
    /// - Parameters:
    ///   - attributes: The item's attributes.
    ///   - reference: Its persistent reference, shown as `id` in hex.
    ///   - secret: Its secret, or `nil` to leave it out.
    ///   - certificateDER: For a certificate, its DER (for its validity and fingerprints), or `nil`.
    static func object(
        attributes: ItemAttributes, reference: PersistentReference?, secret: [UInt8]?, certificateDER: [UInt8]? = nil
    ) -> JSONValue {
        var members: [String: JSONValue] = [
            "class": .string(AttributeValueNames.name(of: attributes.itemClass)),
            "attributes": .object(Dictionary(uniqueKeysWithValues: attributes.map { ($0.attribute.name, value($0.value, of: $0.attribute)) })),
        ]
        if let reference { members["id"] = .string(Hex.lower(reference.bytes)) }
        if let der = certificateDER {
            if let validity = CertificateValidity(certificateDER: der) {
                members["notBefore"] = .string(validity.notBefore)
                members["notAfter"] = .string(validity.notAfter)
            }
            members["sha1"] = .string(Hex.lower(Insecure.SHA1.hash(data: der)))
            members["sha256"] = .string(Hex.lower(SHA256.hash(data: der)))
        }
        if let secret {
            members["secretBase64"] = .string(Data(secret).base64EncodedString())
            if let text = String(validating: secret, as: UTF8.self) { members["secret"] = .string(text) }
        }
        return .object(members)
    }

    /// `{"keychain": PATH, KEY: [OBJECTS]}` as text, the shape every `--json` listing has.
    static func listing(keychain: String, _ key: String, _ objects: [JSONValue]) throws(CommandError) -> String {
        try JSONValue.object(["keychain": .string(keychain), key: .array(objects)]).text()
    }

    private static func value(_ value: AttributeValue, of attribute: Attribute) -> JSONValue {
        switch value {
        case .string(let text): return .string(text)
        case .bytes(let bytes):
            if attribute == .subject || attribute == .issuer, let text = DistinguishedName.rfc4514(bytes) { return .string(text) }
            return .string(Hex.lower(bytes))
        case .integer(let number):
            if let name = AttributeValueNames.name(of: number, for: attribute) { return .string(name) }
            if AttributeCodes.isFourCharacterCode(attribute), let text = SecurityText.fourCharacters(number) {
                return .string(text)
            }
            return .integer(number)
        case .boolean(let flag): return .boolean(flag)
        case .date(let date): return .string(iso8601(date))
        }
    }

    /// `date` as `2026-01-01T00:00:00.000Z`.
    static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
