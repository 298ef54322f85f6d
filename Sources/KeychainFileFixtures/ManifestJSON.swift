/// A JSON value with a deterministic rendering (sorted keys, two-space indentation, one item per line),
/// so that regenerated manifests are byte-identical on every platform.
public indirect enum ManifestJSON: Equatable, Sendable {
    case object([String: ManifestJSON])
    case array([ManifestJSON])
    case string(String)
    case integer(Int64)
    case boolean(Bool)
    case null

    public func rendered() -> String {
        var output = ""
        render(into: &output, indent: 0)
        output += "\n"
        return output
    }

    private func render(into output: inout String, indent: Int) {
        let pad = String(repeating: "  ", count: indent)
        switch self {
        case .object(let members):
            guard !members.isEmpty else { output += "{}"; return }
            // Objects of scalars (attribute values such as {"string": "ann"}) stay on one line.
            if members.values.allSatisfy(\.isScalar) {
                output += "{" + members.keys.sorted().map { key in
                    var value = ""
                    members[key]!.render(into: &value, indent: 0)
                    return ManifestJSON.quote(key) + ": " + value
                }.joined(separator: ", ") + "}"
                return
            }
            output += "{\n"
            let keys = members.keys.sorted()
            for (index, key) in keys.enumerated() {
                output += pad + "  " + ManifestJSON.quote(key) + ": "
                members[key]!.render(into: &output, indent: indent + 1)
                output += index == keys.count - 1 ? "\n" : ",\n"
            }
            output += pad + "}"
        case .array(let elements):
            guard !elements.isEmpty else { output += "[]"; return }
            output += "[\n"
            for (index, element) in elements.enumerated() {
                output += pad + "  "
                element.render(into: &output, indent: indent + 1)
                output += index == elements.count - 1 ? "\n" : ",\n"
            }
            output += pad + "]"
        case .string(let text): output += ManifestJSON.quote(text)
        case .integer(let value): output += String(value)
        case .boolean(let value): output += value ? "true" : "false"
        case .null: output += "null"
        }
    }

    var isScalar: Bool {
        switch self {
        case .object, .array: return false
        default: return true
        }
    }

    static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value):
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var characters: [UInt8] = []
    characters.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        characters.append(digits[Int(byte >> 4)])
        characters.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: characters, as: UTF8.self)
}
