import Foundation

/// A JSON value, for `--json`.
enum JSONValue: Encodable {
    case string(String)
    case integer(Int64)
    case boolean(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .integer(let number): try container.encode(number)
        case .boolean(let flag): try container.encode(flag)
        case .array(let values): try container.encode(values)
        case .object(let members): try container.encode(members)
        case .null: try container.encodeNil()
        }
    }

    /// An object with one more member (`self` unchanged when it is not an object).
    func adding(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var members) = self else { return self }
        members[key] = value
        return .object(members)
    }

    /// The value as JSON text on one line, with sorted keys: a string's newlines and quotes are escaped.
    func compactText() throws(CommandError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        } catch {
            throw .failed("cannot encode JSON: \(error)")
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
