import KeychainCrypto
import KeychainFile

/// `find-certificate`, `find-identity` and `find-key`.
enum CertificateCommands {
    static let findCertificate = Command(
        name: "find-certificate", summary: "find certificates and print their attributes, PEM or hashes",
        options: [
            OptionSpec("c", .value("NAME"), help: "match certificates whose label or common name contains NAME"),
            OptionSpec("a", help: "print every match, not just the first"),
            OptionSpec("p", help: "print the certificate as PEM"),
            OptionSpec("Z", help: "print the certificate's SHA-256 and SHA-1 hashes"),
            OptionSpec.json("{\"keychain\", \"items\": [...]}: subject and issuer as RFC 4514 text, notBefore, notAfter, sha1, sha256; pem with -p"),
            OptionSpec.expectedHead,
        ],
        positionals: [PositionalSpec.keychain],
        details: ["Exits 44 when no certificate matches. With --json the validity dates are ISO 8601 in UTC."],
        run: { (context) throws(CommandError) in try findCertificate(context) })

    static let findIdentity = Command(
        name: "find-identity", summary: "list identities (certificates with their private keys)",
        options: [
            OptionSpec("s", .value("STRING"), help: "only identities whose label or common name contains STRING"),
            OptionSpec.json("{\"keychain\", \"identities\": [{\"sha1\", \"name\", \"certificate\", \"privateKey\"}]} (no key bytes)"),
            OptionSpec.expectedHead,
        ],
        positionals: [PositionalSpec.keychain],
        details: ["""
            Prints each identity's certificate SHA-1 hash and name, then the count, as security does (and, as
            security does, exits 0 when there are none). No trust evaluation is done: security's -p and -v are
            not offered.
            """],
        run: { (context) throws(CommandError) in try findIdentity(context) })

    static let findKey = Command(
        name: "find-key", summary: "find keys and print their attributes",
        options: [
            OptionSpec("l", .value("LABEL"), help: "match the label"),
            OptionSpec("t", .value("CLASS"), values: .choices(["private", "public", "symmetric"]), help: "match the key class: private, public or symmetric"),
            OptionSpec("a", help: "print every match, not just the first"),
            OptionSpec.json("{\"keychain\", \"items\": [...]}, with keyClass and keyType named (private, ec, …)"),
            OptionSpec.expectedHead,
        ],
        positionals: [PositionalSpec.keychain],
        details: ["Key bytes are never printed here (dump-keychain -d prints every secret). Exits 44 when no key matches."],
        run: { (context) throws(CommandError) in try findKey(context) })

    private static func findCertificate(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let keychain = try context.openKeychain()
        var matches = try KeychainListing.all(.certificate, in: keychain, returning: [.attributes, .data, .persistentReference])
            .filter { name(of: $0.attributes, contains: context.value("c")) }
        guard !matches.isEmpty else { throw .keychain(.itemNotFound) }
        if !context.has("a") { matches = [matches[0]] }
        if context.has("json") {
            let objects = matches.compactMap { match -> JSONValue? in
                guard let attributes = match.attributes else { return nil }
                let object = ItemJSON.object(attributes: attributes, reference: match.persistentReference, secret: nil,
                                             certificateDER: match.value ?? [])
                return context.has("p") ? object.adding("pem", .string(PEM.encode(match.value ?? [], label: "CERTIFICATE"))) : object
            }
            Output.line(try ItemJSON.listing(keychain: keychain.path, "items", objects))
            return .success
        }
        for match in matches {
            let der = match.value ?? []
            if context.has("Z") {
                Output.line("SHA-256 hash: " + Hex.upper(SHA256.hash(data: der)))
                Output.line("SHA-1 hash: " + Hex.upper(Insecure.SHA1.hash(data: der)))
            }
            if context.has("p") {
                Output.line(PEM.encode(der, label: "CERTIFICATE"))
            } else if let attributes = match.attributes {
                ItemPrinter.print(keychain: keychain.path, attributes: attributes)
            }
        }
        return .success
    }

    private static func findIdentity(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let keychain = try context.openKeychain()
        let identities = try KeychainListing.all(.identity, in: keychain, returning: [.attributes, .data, .persistentReference])
            .filter { name(of: $0.attributes, contains: context.value("s")) }
        if context.has("json") {
            let objects = identities.compactMap { identity -> JSONValue? in
                guard let attributes = identity.attributes else { return nil }
                var members: [String: JSONValue] = [
                    "sha1": .string(Hex.lower(Insecure.SHA1.hash(data: identity.value ?? []))),
                    "name": .string(displayName(attributes) ?? ""),
                    "certificate": ItemJSON.object(attributes: attributes, reference: identity.persistentReference, secret: nil,
                                                   certificateDER: identity.value ?? []),
                ]
                if let key = identity.privateKey, let keyAttributes = key.attributes {
                    members["privateKey"] = ItemJSON.object(attributes: keyAttributes, reference: key.persistentReference, secret: nil)
                }
                return .object(members)
            }
            Output.line(try ItemJSON.listing(keychain: keychain.path, "identities", objects))
            return .success
        }
        for (number, identity) in identities.enumerated() {
            let hash = Hex.upper(Insecure.SHA1.hash(data: identity.value ?? []))
            let name = displayName(identity.attributes) ?? ""
            Output.line("  \(number + 1)) \(hash) \(SecurityText.quoted(Array(name.utf8)))")
        }
        Output.line("     \(identities.count) identities found")
        return .success
    }

    private static func findKey(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        var values: [Attribute: AttributeValue] = [:]
        if let label = context.value("l") { values[.label] = .string(label) }
        if let text = context.value("t") {
            let classes: [String: KeyClass] = ["private": .privateKey, "public": .publicKey, "symmetric": .symmetric]
            guard let keyClass = classes[text] else { throw .usage("-t takes private, public or symmetric, not \"\(text)\"") }
            values[.keyClass] = .integer(keyClass.rawValue)
        }
        let keychain = try context.openKeychain()
        let query = Query(.key, attributes: values, synchronizable: .any, limit: context.has("a") ? .all : .one)
        let results = try keychainCall { () throws(KeychainError) in
            try keychain.search(query, returning: [.attributes, .persistentReference])
        }
        if context.has("json") {
            let objects = results.compactMap { result in
                result.attributes.map { ItemJSON.object(attributes: $0, reference: result.persistentReference, secret: nil) }
            }
            Output.line(try ItemJSON.listing(keychain: keychain.path, "items", objects))
            return .success
        }
        for result in results {
            if let attributes = result.attributes { ItemPrinter.print(keychain: keychain.path, attributes: attributes) }
        }
        return .success
    }

    /// The certificate's label, else its subject's common name.
    static func displayName(_ attributes: ItemAttributes?) -> String? {
        guard let attributes else { return nil }
        if case .string(let label)? = attributes[.label] { return label }
        if case .bytes(let subject)? = attributes[.subject] { return CertificateName.commonName(subject) }
        return nil
    }

    /// Whether the label or the subject's common name contains `text` (always, for `nil`).
    static func name(of attributes: ItemAttributes?, contains text: String?) -> Bool {
        guard let text else { return true }
        guard let attributes else { return false }
        var names: [String] = []
        if case .string(let label)? = attributes[.label] { names.append(label) }
        if case .bytes(let subject)? = attributes[.subject], let common = CertificateName.commonName(subject) { names.append(common) }
        return names.contains { $0.contains(text) }
    }
}
