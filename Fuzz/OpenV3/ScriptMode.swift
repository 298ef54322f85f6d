import Foundation
@testable import KeychainFile

/// Mode (b): the input (first byte not 0x89) is a script of operations that the harness performs through the
/// library's writer on a new version 3 keychain created with ``FuzzCredentials``' raw key; the file it leaves is
/// written to FUZZ_WRITE_KEYCHAIN if that is set (the script makes the whole-file seeds so), then checked as the
/// whole-file mode checks a file, and caught up with from the file as it stood before the last operation.
///
/// Layout: byte 0 is ignored (it only selects this mode); then up to ``maximumOperations`` operations, each a u8
/// whose value modulo 8 is
/// - 0, 1: add — u8 group (modulo 4, ``V3Credentials/groups``), u8 account (modulo 16), u8 secret length (modulo
///   64), the secret's fill byte;
/// - 2: delete — u8 group, u8 account;
/// - 3: update a secret — u8 group, u8 account, u8 length, fill byte;
/// - 4: compact;
/// - 5: add a credential — u8 (modulo 3): the scoped key, the scoped password, the full password;
/// - 6: a batch of adds — u8 count (modulo 6), then each as an add;
/// - 7: a write by a scoped holder — u8 (modulo 2) which scoped credential, then an add, then a deletion as above
///   (groups outside its scope are refused with `missingEntitlement`).
///
/// An operation the API refuses for what was asked (a duplicate, an item not found, a group the credential does not
/// reach, a credential added twice, a scope of a group with no items yet) is skipped; any other failure of the
/// library's own writer on its own file is a finding.
enum ScriptMode {
    static let maximumOperations = 48

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes, from: 1)
        let fileSystem = MemoryFileSystem()
        var random = FuzzRandom(seed: 0x5633_5343_5249_5054)
        let keychain: Keychain
        do {
            var options = Keychain.CreationOptions(autoCompaction: .disabled)
            options.formatVersion = 3
            options.passwordKeyDerivation = V3Credentials.cheap
            keychain = try Keychain.create(
                at: FuzzStore.path, credential: FuzzCredentials.key, options: options, random: RandomSource(random),
                clock: FuzzStore.clock, fileSystem: fileSystem)
        } catch {
            Invariant.check(false, "an empty version 3 keychain cannot be made: \(error)")
            return
        }
        var before = image(fileSystem)
        var operations = 0
        while !input.isAtEnd && operations < maximumOperations {
            operations += 1
            before = image(fileSystem)
            let op = input.byte() % 8
            perform(op, &input, keychain, fileSystem: fileSystem, random: &random)
        }
        let after = image(fileSystem)
        if let path = ProcessInfo.processInfo.environment["FUZZ_WRITE_KEYCHAIN"] {
            _ = FileManager.default.createFile(atPath: path, contents: Data(after))
        }
        // What the writer holds is what a fresh open with the same key reads (a rewrite sorts by group: by id).
        // KeychainContents reads the writer's index as it stands, without catching up: when the script's last
        // operation was a scoped holder's write (another Keychain), the writer is first brought up to it, as any
        // read of the library would.
        do {
            try keychain.refresh()
        } catch {
            Invariant.check(false, "the writer cannot catch up with its own file: \(error)")
        }
        var store = FuzzStore(after)
        do {
            let again = try store.open(with: FuzzCredentials.key)
            Invariant.check(
                KeychainContents(of: again, FormatV3Checks.self).itemsByID == KeychainContents(of: keychain, FormatV3Checks.self).itemsByID,
                "the writer and a fresh open of its file hold other items")
        } catch {
            Invariant.check(false, "the file the writer made does not open: \(error)")
        }
        WholeFileMode.run(after)
        RefreshChecks<FormatV3Checks>.run(from: before, to: after, credential: FuzzCredentials.key)
        RefreshChecks<FormatV3Checks>.run(from: before, to: after, credential: V3Credentials.scopedKey)
    }

    static func perform(_ op: UInt8, _ input: inout FuzzInput, _ keychain: Keychain, fileSystem: MemoryFileSystem, random: inout FuzzRandom) {
        do {
            switch op {
            case 0, 1:
                _ = try keychain.add(item(&input))
            case 2:
                let (group, account) = (group(&input), account(&input))
                trace("delete \(account) of \"\(group)\"")
                _ = try keychain.delete(query(group: group, account: account))
            case 3:
                let (group, account) = (group(&input), account(&input))
                let secret = secret(&input)
                trace("update \(account) of \"\(group)\" to \(secret.count) bytes")
                try keychain.update(query(group: group, account: account), setting: [:], secret: secret)
            case 4:
                trace("compact")
                try keychain.compact()
            case 5:
                switch input.byte() % 3 {
                case 0:
                    trace("add the scoped key")
                    try keychain.addCredential(
                        V3Credentials.scopedKey, scope: .groups(V3Credentials.scopedKeyGroups.sorted()), keyDerivation: V3Credentials.cheap)
                case 1:
                    trace("add the scoped password")
                    try keychain.addCredential(
                        V3Credentials.scopedPassword, scope: .groups(V3Credentials.scopedPasswordGroups.sorted()),
                        keyDerivation: V3Credentials.cheap)
                default:
                    trace("add the full password")
                    try keychain.addCredential(FuzzCredentials.password, keyDerivation: V3Credentials.cheap)
                }
            case 6:
                let count = Int(input.byte() % 6)
                let items = (0..<count).map { _ in item(&input) }
                trace("batch of \(count) adds")
                try keychain.batch { (batch) throws(KeychainError) in
                    for item in items { _ = try batch.add(item) }
                }
            default:
                let credential = input.byte() % 2 == 0 ? V3Credentials.scopedKey : V3Credentials.scopedPassword
                let added = item(&input)
                let (group, account) = (group(&input), account(&input))
                trace("a scoped holder adds, and deletes \(account) of \"\(group)\"")
                let scoped: Keychain
                do {
                    scoped = try Keychain.open(
                        at: FuzzStore.path, credential: credential, options: Keychain.OpenOptions(autoCompaction: .disabled),
                        random: RandomSource(random), clock: FuzzStore.clock, fileSystem: fileSystem)
                } catch .wrongCredentials {
                    return  // not added yet
                }
                _ = random.next()
                do { _ = try scoped.add(added) } catch { try expected(error) }
                _ = try scoped.delete(query(group: group, account: account))
            }
        } catch {
            do { try expected(error) } catch {
                Invariant.check(false, "operation \(op) on the writer's own file failed: \(error)")
            }
        }
    }

    /// Rethrows a failure that is not an answer to what the script asked.
    static func expected(_ error: KeychainError) throws(KeychainError) {
        switch error {
        case .duplicateItem, .itemNotFound, .missingEntitlement, .invalidParameter: trace("refused: \(error)")
        default: throw error
        }
    }

    static func group(_ input: inout FuzzInput) -> String { V3Credentials.groups[Int(input.byte() % 4)] }
    static func account(_ input: inout FuzzInput) -> String { "account \(input.byte() % 16)" }

    static func secret(_ input: inout FuzzInput) -> [UInt8] {
        let count = Int(input.byte() % 64)
        return [UInt8](repeating: input.byte(), count: count)
    }

    static func item(_ input: inout FuzzInput) -> GenericPassword {
        let (group, account) = (group(&input), account(&input))
        let secret = secret(&input)
        trace("add \(account) to \"\(group)\", \(secret.count) bytes")
        return GenericPassword(service: "fuzz", account: account, accessGroup: group, value: secret)
    }

    static func query(group: String, account: String) -> Query {
        Query(.genericPassword, attributes: [.service: .string("fuzz"), .account: .string(account), .accessGroup: .string(group)])
    }

    static func image(_ fileSystem: MemoryFileSystem) -> [UInt8] {
        do {
            let file = try fileSystem.openExisting(FuzzStore.path)
            defer { file.close() }
            return try file.readExactly(count: try file.size(), at: 0)
        } catch {
            Invariant.check(false, "the in-memory file cannot be read back: \(error)")
            return []
        }
    }
}
