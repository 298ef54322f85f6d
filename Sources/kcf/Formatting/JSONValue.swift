import Foundation

/// A JSON value, for `dump-keychain --json`.
enum JSONValue: Encodable {
    case string(String)
    case integer(Int64)
    case boolean(Bool)
    case array([JSONValue])
    case object([String: JSONValue])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .integer(let number): try container.encode(number)
        case .boolean(let flag): try container.encode(flag)
        case .array(let values): try container.encode(values)
        case .object(let members): try container.encode(members)
        }
    }

    /// The value as pretty-printed JSON text with sorted keys.
    func text() throws(CommandError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        } catch {
            throw .failed("cannot encode JSON: \(error)")
        }
    }
}
