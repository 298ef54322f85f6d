import Foundation
import KeychainFile

/// `import FILE` (a certificate, a private key, or another password store's export) and
/// `add-certificates FILE...`.
enum ImportCommands {
    static let importCommand = Command(
        name: "import", summary: "import a certificate, a private key, a PKCS #12 file, or another password store's export",
        options: [
            OptionSpec("t", .value("TYPE"), values: .choices(["cert", "priv"]), help: "cert or priv (default: told from the file)"),
            OptionSpec("f", long: "format", .value("FORMAT"), values: .choices(["pkcs12"] + ImportFormat.allCases.map(\.rawValue)),
                       help: "pkcs12, or an export: " + ImportFormat.allCases.map(\.rawValue).joined(separator: ", ") + " (default: told from FILE)"),
            OptionSpec("P", .value("PASSPHRASE"), help: "the PKCS #12 passphrase or KeePass password (visible to other users: best left out, to be asked)"),
            OptionSpec(long: "key-file", .value("KEYFILE"), values: .file, help: "a KeePass database: its key file (.keyx, .key, or any file)"),
            OptionSpec("l", .value("LABEL"), help: "label (default: the certificate's common name; \"Imported Private Key\")"),
            OptionSpec("U", help: "update the items the keychain has (same certificate, key or password item) instead of exiting 45"),
            OptionSpec(long: "strict", help: "an export: import nothing if any item would be skipped or any value not kept"),
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
            """, """
            PKCS #12 (-f pkcs12, or told from the file): every certificate and private key in it, in one
            transaction, so that each key and its certificate form an identity; labelled with their friendlyName
            (a key without one takes its certificate's). The passphrase is the next line of stdin (after the
            keychain password's), or asked on a terminal; -P PASSPHRASE as security takes it, with a warning. Read:
            PBES2 (PBKDF2-HMAC-SHA256 with AES-CBC or DES-EDE3-CBC) and unencrypted bags, as OpenSSL 3 and Python's
            cryptography write them, and the legacy 3DES and RC2 (40- and 128-bit) encryption that macOS, Windows
            and OpenSSL 1.x (openssl pkcs12 -legacy) write, in DER or BER; these weak ciphers are read, never
            written. Other algorithms (RC4) are refused, naming them (206). A wrong passphrase exits 51.
            """, """
            Exports of other password stores (-f, or told from FILE: a directory is a pass store, a CSV header
            names Bitwarden's or 1Password's columns, dump text starts with "keychain: ", a KeePass database
            starts with its signature):
              bitwarden-csv   Bitwarden's CSV export (folder,favorite,type,name,notes,fields,reprompt,login_uri,
                              login_username,login_password,login_totp; or an organisation's, with collections)
              1password-csv   1Password's CSV export (Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes)
              pass            a pass password store: each NAME.gpg decrypted with `gpg --decrypt --batch`
              dump-keychain   the text of macOS `security dump-keychain -d`
              kdbx            a KeePass database, KDBX 4.0 or 4.1 (AES-KDF or Argon2, AES-256 or ChaCha20)
            A login with a web address becomes an internet password (server, protocol, port and path from the
            address; no scheme is protocol 0, any), one without a generic password whose service is its name;
            the user name is the account, the name the label, the notes the comment (icmt, shown by find
            without -g). Bitwarden secure notes become generic passwords as Apple keeps them (desc "secure
            note", type note, the text as the secret). A pass entry is a generic password whose service is its
            path without .gpg (Social/mastodon.social), whose secret is the first line and whose comment is the
            other lines; its account is the value of a "login:", "username:" or "user:" line, else empty. Symbolic
            links in the store are not followed. A KeePass entry is a login named by its group path and title
            (Web/GitHub); recycle-bin entries and history are not imported. Its password is the next line of stdin
            (after the keychain password's), or asked on a terminal, or -P PASSWORD with a warning; with
            --key-file KEYFILE (KeePass's XML key files 1.0 and 2.0, a 32-byte or 64-hex-digit key, or any file,
            hashed), an empty password means none; a wrong one
            exits 51; a damaged or altered database (its HMACs) imports nothing (206); KDBX 3.1 and older are
            refused: save them as KDBX 4 in KeePass or KeePassXC. A dump's genp and inet items keep their class and attributes
            (the print name as the label); certificates are imported from their data; keys and dates are not.
            Everything not imported is listed on stderr: items skipped with the reason, and values kcf has no
            place for (one-time password seeds, folders, custom fields, attachments, expiry times, unknown columns
            and attributes) with the
            items that had them. A file that cannot be read as its format imports nothing (206). Two different
            items with one key in the input import nothing (45); an item the keychain has exits 45 unless -U
            is given, which updates it with the imported attributes and secret. --strict imports nothing when
            anything would be listed. Every item is added in one transaction: all or nothing. On a terminal,
            stderr shows how far the decryption of a pass store is. Docs/CommandLine.md has the details.
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
        if try isPKCS12(context, path: path) {
            if context.value("l") != nil { throw .usage("-l labels one certificate or key; a PKCS #12 file's items keep their names") }
            if context.has("strict") { throw .usage("--strict applies to exports of password stores") }
            return try PKCS12Import.run(path: path, context: context)
        }
        let format = try exportFormat(context, path: path)
        if context.has("P") && format != .kdbx { throw .usage("-P is the passphrase of a PKCS #12 file or the password of a KeePass database") }
        if context.has("key-file") && format != .kdbx { throw .usage("--key-file is the key file of a KeePass database") }
        if let format {
            if context.value("l") != nil { throw .usage("-l labels one certificate or key; an export's items keep their names") }
            return try PasswordImport.run(format, path: path, context: context)
        }
        if context.has("strict") { throw .usage("--strict applies to exports (-f)") }
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
        throw .failure("\(path) is neither a DER certificate, a private key nor an export kcf reads (give -t or -f to see why)",
                       .invalidParameter)
    }

    /// Whether to read `path` as PKCS #12: -f pkcs12, or neither -f nor -t and a file that starts as one.
    private static func isPKCS12(_ context: CommandContext, path: String) throws(CommandError) -> Bool {
        if let format = context.value("format") {
            guard format == "pkcs12" else { return false }
            guard context.value("t") == nil else { throw .usage("-t (cert or priv) and -f pkcs12 cannot both be given") }
            return true
        }
        guard context.value("t") == nil, let head = PasswordImport.head(path, count: 16) else { return false }
        return PKCS12Import.looksLikePKCS12(head)
    }

    /// The export format to read `path` as: the one given with -f, else the one told from the file (a directory
    /// is a pass store); `nil` for a certificate or a key.
    private static func exportFormat(_ context: CommandContext, path: String) throws(CommandError) -> ImportFormat? {
        if let given = context.value("format") {
            guard context.value("t") == nil else { throw .usage("-t (cert or priv) and -f (an export) cannot both be given") }
            guard let format = ImportFormat(rawValue: given) else {
                throw .usage("-f takes " + ImportFormat.allCases.map(\.rawValue).joined(separator: ", ") + ", not \"\(given)\"")
            }
            return format
        }
        guard context.value("t") == nil else { return nil }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue { return .pass }
        guard var head = PasswordImport.head(path, count: ImportFormat.detectionLength) else { return nil }
        defer { wipe(&head) }
        return ImportFormat.detect(head)
    }

    /// The bytes of a file; when it cannot be read, the error says why (the system's text for errno).
    static func readFile(_ path: String) throws(CommandError) -> [UInt8] {
        try PasswordImport.file(path)
    }
}
