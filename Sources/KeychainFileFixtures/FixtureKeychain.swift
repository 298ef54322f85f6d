import Foundation
@_spi(Fixtures) import KeychainFile
import KeychainCrypto

/// Builds one fixture keychain and keeps, beside it, the state it must contain: every item the builder
/// added, changed or deleted, computed from the builder's own inputs and clock.
final class FixtureKeychain {
    let path: String
    let credential: Credential
    let credentialJSON: ManifestJSON
    /// The keychain the changes go through: the one created, or for a while another opened on the same file
    /// (``through(_:_:)``), such as a credential scoped to some groups.
    private(set) var keychain: Keychain
    let clock: FixtureClock
    private(set) var expected: [PersistentReference: (attributes: ItemAttributes, secret: [UInt8])] = [:]
    /// Every access group an item was ever put in, and the default group (format version 3 keeps a group, with
    /// its key, once it was added: SPEC.md §32).
    private(set) var groups: Set<String> = [""]
    /// Every item deleted, with when (milliseconds since 1970) and from which group: the tombstones a reader must
    /// find (a rewrite keeps them, SPEC.md §36).
    private(set) var tombstones: [ItemID: (time: Int64, group: String)] = [:]

    /// Fixtures use 1,000 PBKDF2 iterations: deliberately insecure, so that test suites do not spend their
    /// time in the key derivation (the KDF has its own vectors).
    static let iterations = PasswordIterations.insecureForTesting(1_000)

    /// - Parameter keyDerivation: How the password slots derive their key; PBKDF2 at ``iterations`` unless given.
    init(path: String, credential: Credential, credentialJSON: ManifestJSON, seed: UInt64,
         additionalCredentials: [Credential] = [], formatVersion: Int = 1, keyDerivation: PasswordKeyDerivation? = nil) throws {
        self.path = path
        self.credential = credential
        self.credentialJSON = credentialJSON
        clock = FixtureClock(start: Date(timeIntervalSince1970: 1_767_225_600))  // 2026-01-01T00:00:00Z
        var options = Keychain.CreationOptions(passwordIterations: Self.iterations, additionalCredentials: additionalCredentials)
        if let keyDerivation { options.passwordKeyDerivation = keyDerivation }
        options.formatVersion = formatVersion
        // Fixtures of a version stay that version through their rewrites.
        options.keepsFormatVersion = true
        let clock = self.clock
        keychain = try Keychain.create(
            at: path, credential: credential, options: options, randomSource: FixtureRandom(seed: seed),
            clock: { clock.now })
    }

    // MARK: Changes, mirrored in `expected`

    @discardableResult
    func add(_ attributes: ItemAttributes, secret: [UInt8]) throws -> PersistentReference {
        let now = clock.advance()
        let reference = try keychain.add(attributes, secret: secret)
        expected[reference] = (try stamp(attributes.withDefaults(), created: now, modified: now), secret)
        groups.insert(groupName(attributes))
        return reference
    }

    @discardableResult
    func add<Item: KeychainItem>(_ item: Item) throws -> PersistentReference {
        try add(try item.attributes, secret: item.value ?? [])
    }

    /// Compacts the keychain (a rewrite in the next epoch, SPEC.md §15.1); the items do not change.
    func compact() throws {
        try keychain.compact()
    }

    /// Adds a key slot for `credential` (a rewrite, SPEC.md §15.2).
    func addCredential(_ credential: Credential) throws {
        try keychain.addCredential(credential, iterations: Self.iterations)
    }

    /// Replaces the slot `old` opens with one for `new`, keeping the master key (a rewrite, SPEC.md §15.2): the
    /// slot-only change the fixtures describe, which a keychain with other slots allows.
    func changeCredentialKeepingKeys(from old: Credential, to new: Credential) throws {
        try keychain.changeCredentialKeepingKeys(from: old, to: new, keyDerivation: .pbkdf2(Self.iterations))
    }

    func update(_ query: Query, setting changes: [Attribute: AttributeValue], secret: [UInt8]? = nil) throws {
        let now = clock.advance()
        let count = try keychain.update(query, setting: changes, secret: secret)
        var changed = 0
        for (reference, state) in expected where query.matches(state.attributes) {
            var attributes = state.attributes
            for (attribute, value) in changes { attributes = try attributes.setting(attribute, to: value) }
            groups.insert(groupName(attributes))
            attributes = try attributes.setting(.modificationDate, to: .date(now))
            expected[reference] = (attributes, secret ?? state.secret)
            changed += 1
        }
        guard changed == count else { throw FixtureError("update changed \(count) items, the model \(changed)") }
    }

    func delete(_ query: Query) throws {
        let now = clock.advance()
        let count = try keychain.delete(query)
        let removed = expected.filter { query.matches($0.value.attributes) }.map(\.key)
        for reference in removed { remove(reference, at: now) }
        guard removed.count == count else { throw FixtureError("delete removed \(count) items, the model \(removed.count)") }
    }

    /// Adds several items as one transaction record.
    func addAll(_ items: [(ItemAttributes, [UInt8])]) throws {
        let now = clock.advance()
        let references = try keychain.batch { (batch) throws(KeychainError) -> [PersistentReference] in
            var references: [PersistentReference] = []
            for (attributes, secret) in items { references.append(try batch.add(attributes, secret: secret)) }
            return references
        }
        for (reference, (attributes, secret)) in zip(references, items) {
            expected[reference] = (try stamp(attributes.withDefaults(), created: now, modified: now), secret)
            groups.insert(groupName(attributes))
        }
    }

    /// Adds items and deletes the items a query matches, as one transaction record.
    func transaction(adding items: [(ItemAttributes, [UInt8])], deleting query: Query) throws {
        let now = clock.advance()
        let references = try keychain.batch { (batch) throws(KeychainError) -> [PersistentReference] in
            var references: [PersistentReference] = []
            for (attributes, secret) in items { references.append(try batch.add(attributes, secret: secret)) }
            try batch.delete(query)
            return references
        }
        let removed = expected.filter { query.matches($0.value.attributes) }.map(\.key)
        for reference in removed { remove(reference, at: now) }
        for (reference, (attributes, secret)) in zip(references, items) {
            expected[reference] = (try stamp(attributes.withDefaults(), created: now, modified: now), secret)
            groups.insert(groupName(attributes))
        }
    }

    // MARK: Format version 3

    /// Makes the changes of `body` through `other`, a keychain opened on the same file (with a scoped credential,
    /// say), mirrored in `expected` as any other change; then goes on with the keychain created.
    func through(_ other: Keychain, _ body: () throws -> Void) throws {
        let created = keychain
        keychain = other
        defer { keychain = created }
        try body()
        keychain = created
        try created.refresh()
    }

    /// Opens the file with `credential`, with the fixture's clock and a generator seeded by `seed`.
    func open(with credential: Credential, seed: UInt64) throws -> Keychain {
        let clock = self.clock
        return try Keychain.open(at: path, credential: credential, randomSource: FixtureRandom(seed: seed), clock: { clock.now })
    }

    /// Adds a credential that reaches only `groups` (SPEC.md §33; a rewrite).
    func addCredential(_ credential: Credential, scope groups: [String]) throws {
        try keychain.addCredential(credential, scope: .groups(groups), keyDerivation: .pbkdf2(Self.iterations))
    }

    /// Replaces the slot `old` opens with one for `new` and renews the keys, giving them to every other slot (a
    /// rotation, SPEC.md §38.6).
    func changeCredentialRenewingKeys(from old: Credential, to new: Credential) throws {
        try keychain.changeCredential(from: old, to: new, keyDerivation: .pbkdf2(Self.iterations))
    }

    /// Takes `reference` out of the expected items, leaving its tombstone.
    private func remove(_ reference: PersistentReference, at time: Date) {
        guard let removed = expected.removeValue(forKey: reference) else { return }
        tombstones[reference.itemID] = (Int64((time.timeIntervalSince1970 * 1_000).rounded()), groupName(removed.attributes))
    }

    private func stamp(_ attributes: ItemAttributes, created: Date, modified: Date) throws -> ItemAttributes {
        try attributes.setting(.creationDate, to: .date(created)).setting(.modificationDate, to: .date(modified))
    }

    // MARK: The manifest

    /// The expected items, sorted by id, as manifest JSON.
    func expectedItemsJSON() -> ManifestJSON {
        model.itemsJSON()
    }

    /// What a reader must find: the items, the groups, and the groups' heads as the writer's last commit states
    /// them (format version 3; none before).
    var model: FixtureModel {
        FixtureModel(expected: expected, groups: groups, groupHeads: keychain.head.groups, tombstones: tombstones)
    }

    func headJSON() -> ManifestJSON {
        let head = keychain.head
        return .object(["sequence": .integer(Int64(head.sequence)), "chainValue": .string(hex(head.chainValue))])
    }
}

func className(_ itemClass: ItemClass) -> String {
    switch itemClass {
    case .genericPassword: return "genericPassword"
    case .internetPassword: return "internetPassword"
    case .certificate: return "certificate"
    case .key: return "key"
    }
}

func attributesJSON(_ attributes: ItemAttributes) -> ManifestJSON {
    var members: [String: ManifestJSON] = [:]
    for (attribute, value) in attributes {
        switch value {
        case .string(let text): members[attribute.name] = .object(["string": .string(text)])
        case .bytes(let bytes): members[attribute.name] = .object(["bytes": .string(hex(bytes))])
        case .integer(let number): members[attribute.name] = .object(["integer": .integer(number)])
        case .boolean(let flag): members[attribute.name] = .object(["boolean": .boolean(flag)])
        case .date: members[attribute.name] = .object(["date": .integer(value.millisecondsSince1970 ?? 0)])
        }
    }
    return .object(members)
}
