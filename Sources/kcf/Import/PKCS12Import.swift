import KeychainFile

/// `import FILE.p12`: the certificates and private keys of a PKCS #12 file, added as items (in one
/// transaction) so that each key and its certificate form an identity.
enum PKCS12Import {
    /// Whether `bytes` start as a PKCS #12 PFX does: a SEQUENCE whose first field is INTEGER 3, then a SEQUENCE.
    static func looksLikePKCS12(_ bytes: [UInt8]) -> Bool {
        guard bytes.count > 8, bytes[0] == 0x30 else { return false }
        var offset = 2
        if bytes[1] & 0x80 != 0 { offset += Int(bytes[1] & 0x7f) }
        guard offset + 4 <= bytes.count else { return false }
        return Array(bytes[offset..<(offset + 4)]) == [0x02, 0x01, 0x03, 0x30]
    }

    /// Reads the file at `path` with the passphrase (`-P`, else the next line of stdin or asked on the
    /// terminal) and adds its certificates and keys; with `updating`, items the keychain has are updated.
    ///
    /// - Throws: `CommandError`: `.wrongPassword` (51) when the file's MAC does not verify; `.invalidParameter`
    ///   (206) for a file that is not PKCS #12, uses an algorithm kcf does not read, or holds a key kcf does not
    ///   store; `.duplicateItem` (45) for an item the keychain has, without `updating`.
    static func run(path: String, context: CommandContext) throws(CommandError) -> ExitStatus {
        let bytes = try ImportCommands.readFile(path)
        let keychain = try context.openKeychain()
        let passphrase = try PKCS12Export.passphrase(context, prompt: "passphrase for \(path): ", confirm: false, allowEmpty: true)
        let archive: PKCS12Archive
        do throws(PKCS12Error) {
            archive = try PKCS12Archive(bytes: bytes, password: passphrase)
        } catch {
            if error == .wrongPassword {
                throw .failure("\(path): wrong passphrase (the file's MAC does not verify; or the file was altered)", .wrongPassword)
            }
            throw .failure("\(path): \(error)", .invalidParameter)
        }
        guard !archive.certificates.isEmpty || !archive.privateKeys.isEmpty else {
            throw .failure("\(path) holds no certificate and no private key", .invalidParameter)
        }
        var items: [(attributes: ItemAttributes, secret: [UInt8])] = []
        for bag in archive.certificates {
            let certificate = try ImportCommands.certificate(from: bag.der, label: bag.friendlyName)
            items.append((try keychainCall { () throws(KeychainError) in try certificate.attributes }, certificate.der ?? []))
        }
        for bag in archive.privateKeys {
            // A key without a name of its own takes its certificate's, found by localKeyId.
            let paired = bag.localKeyID.flatMap { id in archive.certificates.first { $0.localKeyID == id } }
            let label = bag.friendlyName ?? paired?.friendlyName ?? "Imported Private Key"
            let key = try PrivateKeyFile(fileBytes: bag.pkcs8).item(label: label)
            items.append((try keychainCall { () throws(KeychainError) in try key.attributes }, key.value ?? []))
        }
        let updating = context.has("U")
        let updated = try keychainCall { () throws(KeychainError) -> Int in
            try keychain.batch { (batch) throws(KeychainError) -> Int in
                var updated = 0
                for item in items {
                    do throws(KeychainError) {
                        _ = try batch.add(item.attributes, secret: item.secret)
                    } catch {
                        guard error == .duplicateItem, updating else { throw error }
                        try batch.update(PrimaryKeyQuery.query(for: item.attributes), setting: PrimaryKeyQuery.changes(item.attributes),
                                         secret: item.secret)
                        updated += 1
                    }
                }
                return updated
            }
        }
        let certificates = archive.certificates.count
        let keys = archive.privateKeys.count
        let summary = "\(certificates) certificate\(certificates == 1 ? "" : "s") and \(keys) key\(keys == 1 ? "" : "s")"
        Output.line(updated == 0 ? "\(summary) imported." : "\(summary) imported (\(updated) updated).")
        return .success
    }
}
