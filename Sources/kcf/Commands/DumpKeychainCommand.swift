import KeychainFile

/// `dump-keychain`: every item, as `security` prints them or as JSON; secrets only when asked and confirmed.
enum DumpKeychainCommand {
    static let command = Command(
        name: "dump-keychain", summary: "print every item (secrets only with -d)",
        options: [
            OptionSpec.json("{\"keychain\": PATH, \"items\": [{\"class\", \"id\", \"attributes\", …}]}"),
            OptionSpec("d", help: "include every secret (asks for confirmation on the terminal)"),
            OptionSpec(long: "yes", help: "with -d: do not ask (needed when there is no terminal)"),
            OptionSpec.expectedHead,
        ],
        positionals: [PositionalSpec.keychain],
        details: ["""
            Items are listed by class (generic passwords, internet passwords, certificates, keys), each in the
            order it was added. In JSON, classes and coded values have names (genericPassword, "accessible":
            "whenUnlocked", "protocol": "https", "keyType": "ec"), a certificate's subject and issuer are RFC 4514
            text and it has notBefore, notAfter (ISO 8601), sha1 and sha256; other bytes are lowercase hex, dates
            ISO 8601 UTC; with -d each item also has secretBase64, and secret when it is UTF-8 text.
            """],
        run: { (context) throws(CommandError) in try dump(context) })

    private static func dump(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let withSecrets = context.has("d")
        if withSecrets && !context.has("yes") {
            let path = try context.existingKeychainPath()
            guard TerminalPrompt.isAvailable else {
                throw .usage("-d prints every secret; without a terminal to confirm on, add --yes")
            }
            let answer = try TerminalPrompt.ask("print every secret of \(path) to stdout? type yes to go on: ")
            guard answer == "yes" else { throw .failed("not confirmed; nothing printed") }
        }
        let keychain = try context.openKeychain()
        let returning: ReturnOptions = withSecrets ? [.attributes, .data, .persistentReference] : [.attributes, .persistentReference]
        var items: [SearchResult] = []
        for (queryClass, _) in KeychainListing.classes {
            // A certificate's DER is not a secret: JSON shows its validity and fingerprints with or without -d.
            let certificateData: ReturnOptions = context.has("json") && queryClass == .certificate ? [.data] : []
            items += try KeychainListing.all(queryClass, in: keychain, returning: returning.union(certificateData))
        }
        if context.has("json") {
            let objects = items.compactMap { item in
                item.attributes.map {
                    ItemJSON.object(attributes: $0, reference: item.persistentReference, secret: withSecrets ? item.value : nil,
                                    certificateDER: $0.itemClass == .certificate ? item.value : nil)
                }
            }
            Output.line(try JSONValue.object(["keychain": .string(keychain.path), "items": .array(objects)]).text())
            return .success
        }
        for item in items {
            guard let attributes = item.attributes else { continue }
            ItemPrinter.print(keychain: keychain.path, attributes: attributes)
            if withSecrets, let secret = item.value {
                Output.line("data:")
                Output.line(SecurityText.blob(secret))
            }
        }
        return .success
    }
}
