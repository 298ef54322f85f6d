import Foundation
import KeychainFile

/// `import FILE` (a certificate or a private key, DER or PEM) and `add-certificates FILE...`.
enum ImportCommands {
    static let importCommand = Command(
        name: "import", summary: "import a certificate or a private key (DER or PEM)",
        options: [
            OptionSpec("t", .value("TYPE"), values: .choices(["cert", "priv"]), help: "cert or priv (default: told from the file)"),
            OptionSpec("l", .value("LABEL"), help: "label (default: the certificate's common name; \"Imported Private Key\")"),
            OptionSpec("U", help: "update the item if the keychain has it (same certificate or key): its label and bytes"),
            OptionSpec.expectedHead,
        ],
        positionals: [PositionalSpec("FILE", values: .file)],
        details: ["""
            Certificates: one X.509 certificate, DER or PEM. Private keys: PKCS #8, PKCS #1 (RSA) or SEC 1
            (EC, with its public key), DER or PEM, or raw X9.63 bytes; stored as Apple's keychain stores them
            (RSA: PKCS #1; EC: 04 ‖ X ‖ Y ‖ K), labelled with SHA-1 of the public key so that the key and its
            certificate form an identity (see find-identity). Encrypted keys are not read. A certificate already
            in the keychain (same issuer and serial number) or a key already there (same key) exits 45, unless -U
            is given: then the item is updated, with the new label and bytes.
            """],
        run: { (context) throws(CommandError) in try importFile(context) })

    static let addCertificates = Command(
        name: "add-certificates", aliases: ["add-certificate"], summary: "add certificates (DER or PEM files)",
        options: [OptionSpec.expectedHead],
        positionals: [PositionalSpec("FILE", repeats: true, values: .file)],
        run: { (context) throws(CommandError) in try addCertificates(context) })

    private enum Kind: String { case cert, priv }

    private static func importFile(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let path = context.arguments.positionals[0]
        let bytes = try readFile(path)
        let kind = try kind(of: bytes, given: context.value("t"), path: path)
        let label = context.value("l")
        let keychain = try context.openKeychain()
        let attributes: ItemAttributes
        let secret: [UInt8]
        switch kind {
        case .cert:
            let certificate = try certificate(from: bytes, label: label)
            attributes = try keychainCall { () throws(KeychainError) in try certificate.attributes }
            secret = certificate.der ?? []
        case .priv:
            let key = try PrivateKeyFile(fileBytes: bytes).item(label: label ?? "Imported Private Key")
            attributes = try keychainCall { () throws(KeychainError) in try key.attributes }
            secret = key.value ?? []
        }
        let updated = try add(attributes, secret: secret, updating: context.has("U"), in: keychain)
        Output.line("1 \(kind == .cert ? "certificate" : "key") \(updated ? "updated" : "imported").")
        return .success
    }

    /// Adds an item; when one with its primary key exists and `updating`, updates that one instead (in one
    /// transaction). Returns whether it updated.
    private static func add(_ attributes: ItemAttributes, secret: [UInt8], updating: Bool, in keychain: Keychain) throws(CommandError) -> Bool {
        try keychainCall { () throws(KeychainError) -> Bool in
            try keychain.batch { (batch) throws(KeychainError) -> Bool in
                do throws(KeychainError) {
                    _ = try batch.add(attributes, secret: secret)
                    return false
                } catch {
                    guard error == .duplicateItem, updating else { throw error }
                    try batch.update(PrimaryKeyQuery.query(for: attributes), setting: PrimaryKeyQuery.changes(attributes), secret: secret)
                    return true
                }
            }
        }
    }

    private static func addCertificates(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        var certificates: [Certificate] = []
        for path in context.arguments.positionals {
            certificates.append(try certificate(from: try readFile(path), label: nil))
        }
        let keychain = try context.openKeychain()
        try keychainCall { () throws(KeychainError) in
            try keychain.batch { (batch) throws(KeychainError) in
                for certificate in certificates { try batch.add(certificate) }
            }
        }
        Output.line("\(certificates.count) certificate\(certificates.count == 1 ? "" : "s") imported.")
        return .success
    }

    /// A certificate item from DER or PEM bytes, labelled `label` or its subject's common name.
    static func certificate(from bytes: [UInt8], label: String?) throws(CommandError) -> Certificate {
        var der = bytes
        if let block = try PEM.decode(bytes) {
            guard block.label == "CERTIFICATE" else {
                throw .failure("a PEM \(block.label) block is not a certificate", .invalidParameter)
            }
            der = block.der
        }
        var certificate = try keychainCall { () throws(KeychainError) in try Certificate(der: der) }
        certificate.label = label ?? certificate.subject.flatMap(CertificateName.commonName)
        return certificate
    }

    private static func kind(of bytes: [UInt8], given: String?, path: String) throws(CommandError) -> Kind {
        if let given {
            guard let kind = Kind(rawValue: given) else { throw .usage("-t takes cert or priv, not \"\(given)\"") }
            return kind
        }
        if let block = try PEM.decode(bytes) {
            if block.label == "CERTIFICATE" { return .cert }
            if block.label.hasSuffix("PRIVATE KEY") { return .priv }
            throw .failure("\(path): a PEM \(block.label) block is neither a certificate nor a private key", .invalidParameter)
        }
        if (try? Certificate(der: bytes)) != nil { return .cert }
        if (try? PrivateKeyFile(fileBytes: bytes)) != nil { return .priv }
        throw .failure("\(path) is neither a DER certificate nor a private key (give -t to see why)", .invalidParameter)
    }

    /// The bytes of a file.
    static func readFile(_ path: String) throws(CommandError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .failure("cannot read \(path)", .io)
        }
        return Array(data)
    }
}
