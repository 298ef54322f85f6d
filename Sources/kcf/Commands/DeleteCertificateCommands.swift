import KeychainCrypto
import KeychainFile

/// `delete-certificate` and `delete-identity`: one certificate, chosen by name or hash, or it and its private key.
enum DeleteCertificateCommands {
    private static let choosing = [
        OptionSpec("c", .value("NAME"), help: "the certificate whose label or common name contains NAME"),
        OptionSpec("Z", .value("HASH"), help: "the certificate with this SHA-1 or SHA-256 hash (hex; case, spaces and colons ignored)"),
        OptionSpec.expectedHead,
    ]

    static let deleteCertificate = Command(
        name: "delete-certificate", summary: "delete a certificate, chosen by name (-c) or hash (-Z)",
        options: choosing, positionals: [PositionalSpec.keychain],
        details: ["""
            Exactly one certificate must match: none exits 44; several exit 1 and delete nothing (find-certificate
            -a -Z lists their hashes, for -Z). A private key paired with the certificate is kept (delete-identity
            deletes both).
            """],
        run: { (context) throws(CommandError) in try delete(context, identity: false) })

    static let deleteIdentity = Command(
        name: "delete-identity", summary: "delete a certificate and its private key, chosen by name (-c) or hash (-Z)",
        options: choosing, positionals: [PositionalSpec.keychain],
        details: ["""
            Deletes the identity's certificate and private key in one transaction. Exactly one identity must match:
            none exits 44; several exit 1 and delete nothing (find-identity lists their SHA-1 hashes, for -Z).
            """],
        run: { (context) throws(CommandError) in try delete(context, identity: true) })

    private static func delete(_ context: CommandContext, identity: Bool) throws(CommandError) -> ExitStatus {
        guard context.has("c") || context.has("Z") else { throw .usage("give -c NAME or -Z HASH to choose the \(identity ? "identity" : "certificate")") }
        let hash = try context.value("Z").map(normalizedHash)
        let keychain = try context.openKeychain()
        let candidates = try KeychainListing.all(identity ? .identity : .certificate, in: keychain,
                                                 returning: [.attributes, .data, .persistentReference])
        let matches = candidates.filter { candidate in
            let der = candidate.value ?? []
            if let name = context.value("c"), !CertificateCommands.name(of: candidate.attributes, contains: name) { return false }
            if let hash, hash != Hex.lower(Insecure.SHA1.hash(data: der)), hash != Hex.lower(SHA256.hash(data: der)) { return false }
            return true
        }
        guard let match = matches.first else { throw .keychain(.itemNotFound) }
        guard matches.count == 1 else {
            throw .failed("\(matches.count) \(identity ? "identities" : "certificates") match; nothing was deleted. Choose one with -Z HASH "
                + "(\(identity ? "find-identity" : "find-certificate -a -Z") lists the hashes)")
        }
        var items: [(QueryClass, PersistentReference?)] = [(.certificate, match.persistentReference)]
        if identity { items.append((.key, match.privateKey?.persistentReference)) }
        try keychainCall { () throws(KeychainError) in
            try keychain.batch { (batch) throws(KeychainError) in
                for case let (queryClass, reference?) in items {
                    _ = try batch.delete(Query(queryClass, synchronizable: .any, persistentReference: reference))
                }
            }
        }
        let name = CertificateCommands.displayName(match.attributes) ?? ""
        let sha1 = Hex.upper(Insecure.SHA1.hash(data: match.value ?? []))
        Output.line("deleted \(identity ? "identity (certificate and private key)" : "certificate") \(SecurityText.quoted(Array(name.utf8))), SHA-1 \(sha1)")
        return .success
    }

    /// A hash as lowercase hex without separators.
    ///
    /// - Throws: `CommandError.usage` unless it is 40 (SHA-1) or 64 (SHA-256) hex digits.
    static func normalizedHash(_ text: String) throws(CommandError) -> String {
        let digits = text.lowercased().filter { $0 != ":" && $0 != " " }
        guard digits.count == 40 || digits.count == 64, digits.allSatisfy(\.isHexDigit) else {
            throw .usage("-Z takes a SHA-1 (40 hex digits) or SHA-256 (64) hash, not \"\(text)\"")
        }
        return digits
    }
}
