import Foundation
import KeychainFile

/// `kcf diff-text`: a keychain as text for `git diff` (git's textconv): one line per item, a secret shown only as
/// its keyed fingerprint (SPEC.md §43.8).
enum DiffTextCommand {
    static let command = Command(
        name: "diff-text", summary: "print each item on one line, secrets as keyed fingerprints (git's textconv)",
        positionals: [PositionalSpec.keychain],
        details: ["""
            One line per item: its class, its id, each attribute as NAME=VALUE (values as in --json, quoted), and
            secret=FINGERPRINT, 16 hexadecimal digits keyed by the keychain's key (SPEC.md §43.8): a changed secret
            shows as a changed fingerprint, and the fingerprint tells nothing about the secret to anyone without the
            keychain. Lines are sorted by class, then by id, so that an item changed between two copies is one line
            out and one line in. `kcf git-setup` makes this git's textconv for *.kcf; do not set
            diff.kcf.cachetextconv, which would keep these lines (attributes in the clear) in the repository.
            """],
        run: { (context) throws(CommandError) in try print(context) })

    private static func print(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let path = try context.existingKeychainPath()
        // git runs a textconv on the work tree's keychain, whose lock file other processes may be using, and on
        // temporary copies of old versions (in a directory git-blob-XXXXXX, or named XXXXXX_NAME), whose lock file
        // would be left behind: only that one, when this command made it, is removed.
        let file = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        let lockFile = file.path + ".lock"
        let isGitTemporary = file.deletingLastPathComponent().lastPathComponent.hasPrefix("git-blob-")
            || file.lastPathComponent.dropFirst(6).hasPrefix("_") && file.lastPathComponent.prefix(6).allSatisfy { $0.isLetter || $0.isNumber }
        let removeLockFile = isGitTemporary && !FileManager.default.fileExists(atPath: lockFile)
        defer { if removeLockFile { try? FileManager.default.removeItem(atPath: lockFile) } }
        let keychain = try context.openKeychain()
        for line in try lines(of: keychain) { Output.line(line) }
        return .success
    }

    /// The lines of every item, sorted.
    static func lines(of keychain: Keychain) throws(CommandError) -> [String] {
        var lines: [String] = []
        for (queryClass, _) in KeychainListing.classes {
            var classLines: [String] = []
            for item in try KeychainListing.all(queryClass, in: keychain, returning: [.attributes, .data, .persistentReference]) {
                guard let attributes = item.attributes, let id = item.persistentReference?.itemID else { continue }
                classLines.append(try line(attributes: attributes, id: id, secret: item.value ?? [], keychain: keychain))
            }
            lines += classLines.sorted()
        }
        return lines
    }

    private static func line(attributes: ItemAttributes, id: ItemID, secret: [UInt8], keychain: Keychain) throws(CommandError) -> String {
        guard case .object(let members) = ItemJSON.object(attributes: attributes, reference: nil, secret: nil),
              case .string(let className)? = members["class"], case .object(let values)? = members["attributes"]
        else { throw .failed("internal error: an item's JSON has no class or attributes") }
        var fields = [className, id.description]
        // What names the item first, the dates last, the rest in the keychain's order.
        let first: [Attribute] = [.label, .service, .server, .account]
        let last: [Attribute] = [.creationDate, .modificationDate]
        let middle = attributes.map(\.attribute).filter { !first.contains($0) && !last.contains($0) }
        for attribute in first + middle + last {
            guard let value = values[attribute.name] else { continue }
            fields.append("\(attribute.name)=\(escapingInvisible(try value.compactText()))")
        }
        let fingerprint = try keychainCall { () throws(KeychainError) in try keychain.secretFingerprint(of: secret, itemID: id) }
        fields.append("secret=\(Hex.lower(fingerprint))")
        return fields.joined(separator: " ")
    }

    /// JSON text with what a terminal would act on or hide also escaped (`\uXXXX`): DEL and the C1 controls, format
    /// characters such as U+202E (which reverses the text after it) and the line and paragraph separators.
    static func escapingInvisible(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
                for unit in String(scalar).utf16 { escaped += "\\u" + String(repeating: "0", count: 4 - String(unit, radix: 16).count) + String(unit, radix: 16) }
            default:
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
