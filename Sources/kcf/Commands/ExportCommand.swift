#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import KeychainCrypto
import KeychainFile

/// `export`: certificates as X.509 DER or PEM, private keys as PKCS #8 DER or PEM, identities as PKCS #12.
enum ExportCommand {
    static let command = Command(
        name: "export", summary: "export certificates (X.509), private keys (PKCS #8) or identities (PKCS #12)",
        options: [
            OptionSpec("t", .value("TYPE"), values: .choices(["certs", "privKeys", "identities"]),
                       help: "certs (the default), privKeys, or identities (with -f pkcs12, its default)"),
            OptionSpec("f", .value("FORMAT"), values: .choices(["x509", "pkcs8", "pkcs12"]),
                       help: "x509 (certificates), pkcs8 (keys) or pkcs12 (identities; default: told from -t)"),
            OptionSpec("P", .value("PASSPHRASE"), help: "the PKCS #12 passphrase (visible to other users: best left out, to be asked)"),
            OptionSpec(long: "iterations", .value("N"), help: "PKCS #12: PBKDF2 and MAC iterations (default 600000)"),
            OptionSpec("c", .value("NAME"), help: "only items whose label (or certificate common name) contains NAME"),
            OptionSpec("Z", .value("HASH"), help: "only the certificate with this SHA-1 or SHA-256 hash (hex)"),
            OptionSpec("p", help: "PEM (CERTIFICATE, PRIVATE KEY blocks) rather than DER"),
            OptionSpec("o", .value("FILE"), values: .file, help: "write to FILE, a new file of mode 0600, rather than stdout"),
            OptionSpec(long: "yes", help: "with -t privKeys and no -o: write the unencrypted private keys to stdout"),
            OptionSpec.expectedHead,
        ],
        positionals: [PositionalSpec.keychain],
        details: ["""
            DER holds one item: with several matches, use -p (one PEM block after another) or choose one with -c
            or -Z. Private keys come out unencrypted, as openssl pkey writes them: to a new file with -o (mode
            0600, never over an existing file), or to stdout only with --yes. Exits 44 when nothing matches.
            """, """
            -f pkcs12 (or -t identities) writes identities — certificates with their private keys, as find-identity
            lists them — in one PKCS #12 file, as OpenSSL 3 writes it: PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC) for
            the certificates and each key, an HMAC-SHA256 MAC, and the certificate's label as friendlyName and its
            SHA-1 as localKeyId on both. The passphrase is the next line of stdin (after the keychain password's),
            or asked twice on a terminal; -P PASSPHRASE is accepted as security takes it, with a warning.
            """],
        run: { (context) throws(CommandError) in try export(context) })

    private static func export(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let format = context.value("f")
        let type = context.value("t") ?? (format == "pkcs12" ? "identities" : format == "pkcs8" ? "privKeys" : "certs")
        guard ["certs", "privKeys", "identities"].contains(type) else {
            throw .usage("-t takes certs, privKeys or identities, not \"\(type)\"")
        }
        let expected = ["certs": "x509", "privKeys": "pkcs8", "identities": "pkcs12"][type]
        if let format, format != expected {
            throw .usage("-t \(type) is written as -f \(expected ?? "?"), not \(format)")
        }
        if type != "identities" && (context.has("P") || context.has("iterations")) {
            throw .usage("-P and --iterations apply to PKCS #12 (-f pkcs12)")
        }
        if type == "identities" { return try exportIdentities(context) }
        let keys = type == "privKeys"
        if keys && context.has("Z") { throw .usage("-Z chooses a certificate; for keys use -c NAME") }
        if keys && !context.has("o") && !context.has("yes") {
            throw .usage("private keys are written unencrypted: give -o FILE (a new file of mode 0600), or --yes to write them to stdout")
        }
        let hash = try context.value("Z").map(DeleteCertificateCommands.normalizedHash)
        let keychain = try context.openKeychain()
        var blocks: [(der: [UInt8], label: String)] = []
        if keys {
            for key in try KeychainListing.all(.key, in: keychain, returning: [.attributes, .data]) {
                guard let attributes = key.attributes, case .integer(KeyClass.privateKey.rawValue)? = attributes[.keyClass],
                      CertificateCommands.name(of: attributes, contains: context.value("c")) else { continue }
                blocks.append((try PrivateKeyExport.pkcs8(attributes: attributes, value: key.value ?? []), "PRIVATE KEY"))
            }
        } else {
            for certificate in try KeychainListing.all(.certificate, in: keychain, returning: [.attributes, .data]) {
                let der = certificate.value ?? []
                guard CertificateCommands.name(of: certificate.attributes, contains: context.value("c")) else { continue }
                if let hash, hash != Hex.lower(Insecure.SHA1.hash(data: der)), hash != Hex.lower(SHA256.hash(data: der)) { continue }
                blocks.append((der, "CERTIFICATE"))
            }
        }
        guard !blocks.isEmpty else { throw .keychain(.itemNotFound) }
        let pem = context.has("p")
        guard pem || blocks.count == 1 else {
            throw .failed("\(blocks.count) items match and DER holds one: add -p for PEM, or choose one with -c\(keys ? "" : " or -Z")")
        }
        let bytes = pem ? Array(blocks.map { PEM.encode($0.der, label: $0.label) + "\n" }.joined().utf8) : blocks[0].der
        if let path = context.value("o") {
            try write(bytes, toNewFile: path)
            Output.error("kcf: export: wrote \(blocks.count) \(keys ? "private key" : "certificate")\(blocks.count == 1 ? "" : "s") to \(path)")
        } else {
            Output.bytes(bytes)
        }
        return .success
    }

    /// `-f pkcs12`: the matching identities in one PKCS #12 file, to a new file (-o) or stdout.
    private static func exportIdentities(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        if context.has("p") { throw .usage("PKCS #12 is binary: -p (PEM) does not apply") }
        let hash = try context.value("Z").map(DeleteCertificateCommands.normalizedHash)
        let keychain = try context.openKeychain()
        let (bytes, count) = try PKCS12Export.archive(keychain, context, hash: hash)
        if let path = context.value("o") {
            try write(bytes, toNewFile: path)
            Output.error("kcf: export: wrote \(count) identit\(count == 1 ? "y" : "ies") to \(path)")
        } else {
            Output.bytes(bytes)
        }
        return .success
    }

    /// Writes `bytes` to a new file (O_EXCL, mode 0600) and makes it durable; removes it again on failure.
    private static func write(_ bytes: [UInt8], toNewFile path: String) throws(CommandError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .failure("cannot create \(path): \(String(cString: strerror(errno))) (export never writes over a file)", .io)
        }
        var offset = 0
        var failure: Int32 = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { failure = written == 0 ? EIO : errno; break }
            offset += written
        }
        if failure == 0 && fsync(descriptor) != 0 { failure = errno }
        close(descriptor)
        if failure != 0 {
            unlink(path)
            throw .failure("cannot write \(path): \(String(cString: strerror(failure))); the file was removed", .io)
        }
    }
}

/// write(2), under a name that does not clash with ``ExportCommand``'s own.
private func systemWrite(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, pointer, count)
}
