import Foundation

/// PEM text: base64 between `-----BEGIN LABEL-----` and `-----END LABEL-----` lines (RFC 7468).
enum PEM {
    /// The first PEM block in `bytes`, or `nil` when there is none (the bytes are then taken as DER).
    ///
    /// - Returns: The block's label (such as `CERTIFICATE` or `PRIVATE KEY`) and its decoded bytes.
    /// - Throws: `CommandError` (invalid input) for a block without an end line or with bad base64.
    static func decode(_ bytes: [UInt8]) throws(CommandError) -> (label: String, der: [UInt8])? {
        guard let text = String(validating: bytes, as: UTF8.self),
              let begin = text.range(of: "-----BEGIN ") else { return nil }
        guard let labelEnd = text.range(of: "-----", range: begin.upperBound..<text.endIndex) else {
            throw .failure("PEM: unterminated BEGIN line", .invalidParameter)
        }
        let label = String(text[begin.upperBound..<labelEnd.lowerBound])
        guard let end = text.range(of: "-----END \(label)-----", range: labelEnd.upperBound..<text.endIndex) else {
            throw .failure("PEM: no END \(label) line", .invalidParameter)
        }
        let body = text[labelEnd.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        guard let data = Data(base64Encoded: String(body)) else {
            throw .failure("PEM: the \(label) block is not valid base64", .invalidParameter)
        }
        return (label, Array(data))
    }

    /// `der` as a PEM block with 64-character lines.
    static func encode(_ der: [UInt8], label: String) -> String {
        let base64 = Data(der).base64EncodedString()
        var lines = ["-----BEGIN \(label)-----"]
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(64)))
            rest = rest.dropFirst(64)
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n")
    }
}
