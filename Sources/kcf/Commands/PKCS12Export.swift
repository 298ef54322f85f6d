import KeychainCrypto
import KeychainFile

/// `export -f pkcs12`: identities (certificates with their private keys) as one PKCS #12 file, encrypted
/// with a passphrase as OpenSSL 3 writes it (see ``PKCS12Archive``).
enum PKCS12Export {
    /// The PKCS #12 file of the identities whose name contains `name` (and whose certificate has `hash`, when
    /// given), encrypted with the passphrase: `-P`'s, else the next line of stdin or asked twice on the terminal.
    ///
    /// - Returns: The file's bytes and how many identities it holds.
    /// - Throws: `CommandError`: `.keychain(.itemNotFound)` when no identity matches; `.usage` for a bad
    ///   `--iterations`; what reading the passphrase or converting a key throws.
    static func archive(_ keychain: Keychain, _ context: CommandContext, hash: String?) throws(CommandError) -> (bytes: [UInt8], count: Int) {
        var iterations = PKCS12Archive.defaultIterationCount
        if let given = context.value("iterations") {
            guard let count = Int(given), (1_000...PKCS12Archive.maximumIterationCount).contains(count) else {
                throw .usage("--iterations takes a number from 1000 to \(PKCS12Archive.maximumIterationCount), not \"\(given)\"")
            }
            iterations = count
        }
        var archive = PKCS12Archive()
        for identity in try KeychainListing.all(.identity, in: keychain, returning: [.attributes, .data]) {
            let der = identity.value ?? []
            guard CertificateCommands.name(of: identity.attributes, contains: context.value("c")) else { continue }
            if let hash, hash != Hex.lower(Insecure.SHA1.hash(data: der)), hash != Hex.lower(SHA256.hash(data: der)) { continue }
            guard let key = identity.privateKey, let keyAttributes = key.attributes else { continue }
            // As OpenSSL does: the key and its certificate share SHA-1 of the certificate as localKeyId, and a name.
            let localKeyID = Array(Insecure.SHA1.hash(data: der))
            let name = CertificateCommands.displayName(identity.attributes)
            archive.certificates.append(PKCS12Certificate(der: der, friendlyName: name, localKeyID: localKeyID))
            let pkcs8 = try PrivateKeyExport.pkcs8(attributes: keyAttributes, value: key.value ?? [])
            archive.privateKeys.append(PKCS12PrivateKey(pkcs8: pkcs8, friendlyName: name, localKeyID: localKeyID))
        }
        guard !archive.certificates.isEmpty else { throw .keychain(.itemNotFound) }
        let passphrase = try passphrase(context, prompt: "passphrase for the PKCS #12 file: ", confirm: true, allowEmpty: false)
        do throws(PKCS12Error) {
            return (try archive.encoded(password: passphrase, iterations: iterations), archive.certificates.count)
        } catch {
            throw .failure("cannot write the PKCS #12 file: \(error)", .invalidParameter)
        }
    }

    /// The passphrase: `-P`'s (with a warning: argv is visible to other users), else read as ``SecretInput`` says.
    static func passphrase(_ context: CommandContext, prompt: String, confirm: Bool, allowEmpty: Bool) throws(CommandError) -> String {
        if let given = context.value("P") {
            Output.error("kcf: warning: a passphrase given on the command line is visible to other users of this system (ps, /proc/PID/cmdline) and may be kept in shell history; leave out -P to be prompted, or give it as a line of stdin")
            guard allowEmpty || !given.isEmpty else { throw .failure("the passphrase is empty", .invalidParameter) }
            return given
        }
        return try context.secrets.passphrase(prompt: prompt, confirm: confirm, allowEmpty: allowEmpty)
    }
}
