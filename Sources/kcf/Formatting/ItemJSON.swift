import Foundation
import KeychainFile

/// One item as JSON for `dump-keychain --json`:
///
/// ```json
/// {"class": "genp", "id": "…", "attributes": {"account": "ann", "creationDate": "2026-01-01T00:00:00.000Z", …}}
/// ```
///
/// Attributes are named by the library's names; strings stay strings, bytes are lowercase hex, dates are
/// ISO 8601 in UTC with milliseconds, four-character codes are their four characters. The secret appears
/// only when asked for, as `secretBase64` and, when it is UTF-8 text, also as `secret`.
enum ItemJSON {
    /// The JSON object for one item.
    ///
    /// - Parameters:
    ///   - attributes: The item's attributes.
    ///   - reference: Its persistent reference, shown as `id` in hex.
    ///   - secret: Its secret, or `nil` to leave it out.
    static func object(attributes: ItemAttributes, reference: PersistentReference?, secret: [UInt8]?) -> JSONValue {
        var members: [String: JSONValue] = [
            "class": .string(AttributeCodes.code(of: attributes.itemClass)),
            "attributes": .object(Dictionary(uniqueKeysWithValues: attributes.map { ($0.attribute.name, value($0.value, of: $0.attribute)) })),
        ]
        if let reference { members["id"] = .string(Hex.lower(reference.bytes)) }
        if let secret {
            members["secretBase64"] = .string(Data(secret).base64EncodedString())
            if let text = String(validating: secret, as: UTF8.self) { members["secret"] = .string(text) }
        }
        return .object(members)
    }

    private static func value(_ value: AttributeValue, of attribute: Attribute) -> JSONValue {
        switch value {
        case .string(let text): return .string(text)
        case .bytes(let bytes): return .string(Hex.lower(bytes))
        case .integer(let number):
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
