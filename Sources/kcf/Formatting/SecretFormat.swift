import Foundation

/// How `find-…-password -w` prints a secret: its bytes exactly, or as hexadecimal or base64 text for secrets
/// that are not text. Each form ends with one newline, which is not part of the secret.
enum SecretFormat {
    /// The secret's bytes as stored, then `\n`.
    case raw
    /// Lowercase hexadecimal, two digits a byte (`--hex`), then `\n`.
    case hex
    /// Base64 with padding, RFC 4648 §4 (`--base64`), then `\n`.
    case base64

    /// The form the options of a find command ask for.
    ///
    /// - Throws: `CommandError.usage` for `--hex` or `--base64` without `-w`, or both together.
    static func chosen(in context: CommandContext) throws(CommandError) -> SecretFormat {
        switch (context.has("hex"), context.has("base64")) {
        case (false, false): return .raw
        case (true, true): throw .usage("give --hex or --base64, not both")
        case (let hex, _):
            guard context.has("w") else { throw .usage("--hex and --base64 print the secret of -w in that form; add -w") }
            return hex ? .hex : .base64
        }
    }

    /// What `-w` writes for `secret`.
    func output(_ secret: [UInt8]) -> [UInt8] {
        switch self {
        case .raw: return secret + [0x0A]
        case .hex: return Array((Hex.lower(secret) + "\n").utf8)
        case .base64: return Array((Data(secret).base64EncodedString() + "\n").utf8)
        }
    }
}
