import Foundation
@_spi(Fixtures) import KeychainFile
import KeychainCrypto
import KeychainTestSupport

/// The fixtures of `Fixtures/v3`: version 2's catalogue written in format version 3, and what version 3 adds —
/// access groups under keys of their own, credentials scoped to groups, their writes and rewrites, key rotation
/// given to every slot, and header runs of more than one page (SPEC.md §30 – §38). Each manifest names, beside
/// its own credential, the other credentials of the file and what each must see (`otherCredentials`).
extension FixtureWriter {
    static let catalogueV3: [(name: String, make: Make)] = [
        ("worked-example", { try $0.workedExampleV3($1) }),
        ("empty", { try $0.empty($1) }),
        ("generic-password", { try $0.genericPassword($1) }),
        ("internet-password", { try $0.internetPassword($1) }),
        ("certificate", { try $0.certificate($1) }),
        ("key", { try $0.key($1) }),
        ("identity", { try $0.identity($1) }),
        ("thousand-items", { try $0.thousandItems($1) }),
        ("nfc-password", { try $0.nfcPasswordV2($1) }),
        ("raw-key", { try $0.rawKeyFixture($1) }),
        ("two-key-slots", { try $0.twoKeySlotsV3($1) }),
        ("argon2id-password", { try $0.argon2idPasswordV2($1) }),
        ("compacted", { try $0.compacted($1) }),
        ("credentials-changed", { try $0.credentialsChanged($1) }),
        ("groups", { try $0.groupsV3($1) }),
        ("scoped-writes", { try $0.scopedWritesV3($1) }),
        ("scoped-compaction", { try $0.scopedCompactionV3($1) }),
        ("scoped-password-change", { try $0.scopedPasswordChangeV3($1) }),
        ("keys-renewed", { try $0.keysRenewedV3($1) }),
        ("header-two-pages", { try $0.headerTwoPagesV3($1) }),
        ("header-two-pages-page-repaired", { try $0.headerTwoPagesDamagedV3($1, .secondPageBurst) }),
        ("header-two-pages-run-a-destroyed", { try $0.headerTwoPagesDamagedV3($1, .runADestroyed) }),
        ("grants-piled-up", { try $0.grantsPiledUpV3($1) }),
        ("scoped-rewrites-in-turn", { try $0.scopedRewritesInTurnV3($1) }),
        ("groups-repaired", { try $0.groupsRepairedV3($1) }),
        ("repaired-flipped-bits", { try $0.repairedV2($1, .flippedBits) }),
        ("repaired-sector", { try $0.repairedV2($1, .sector) }),
        ("repaired-header-copy", { try $0.repairedV2($1, .headerCopy) }),
        ("crash-remnant", { try $0.crashRemnantV2($1) }),
        ("power-cut-to-older-commit", { try $0.powerCutV2($1) }),
        ("newest-commit-unrepairable", { try $0.newestCommitUnrepairableV2($1) }),
        ("older-records-unrepairable", { try $0.olderRecordsUnrepairableV2($1) }),
        ("both-header-copies-destroyed", { try $0.headersDestroyedV2($1) }),
        ("version-3-header-unreadable", { try $0.headerUnreadableV3($1) }),
        ("truncated-header", { try $0.truncatedHeaderV2($1) }),
        ("wrong-password", { try $0.wrongPassword($1) }),
        ("not-a-keychain", { try $0.notAKeychain($1) }),
    ]

    static let mailGroup = "TEAMID.mail"
    static let chatGroup = "TEAMID.chat"
    static let mailPassword = Credential.password("the mail app's password")
    static let chatPassword = Credential.password("the chat app's password")
    static let sharedPassword = Credential.password("a password for mail and chat")
    static let notesGroup = "TEAMID.notes"

    /// A raw-key credential and its manifest form.
    struct RawKey {
        let bytes: [UInt8]
        var credential: Credential { .key(SymmetricKey(data: bytes)) }
        var json: ManifestJSON { .object(["key": .string(hex(bytes))]) }
    }

    /// A password credential's manifest form; a raw key's is ``RawKey/json``.
    static func json(_ credential: Credential) -> ManifestJSON {
        if case .password(let password) = credential { return .object(["password": .string(password)]) }
        return .null
    }

    // MARK: Manifest fields of version 3

    /// What `credential`, reaching `scope` (every group when `nil`), must see of `fixture` as it stands.
    func view(_ fixture: FixtureKeychain, _ credential: Credential, json: ManifestJSON? = nil, scope: [String]?) -> ManifestJSON {
        let model = scope.map { fixture.model.scoped(to: $0) } ?? fixture.model
        let credentialJSON = json ?? Self.json(credential)
        var expect: ManifestJSON = .null
        if case .object(let members) = opens(model: model, credentialJSON: credentialJSON, head: fixture.headJSON(), "") {
            expect = members["expect"] ?? .null
        }
        return .object([
            "credential": credentialJSON,
            "scope": scope.map { .array($0.sorted().map { .string($0) }) } ?? .null,
            "expect": expect,
        ])
    }

    /// A credential that opens no slot of the file.
    func refused(_ credential: Credential) -> ManifestJSON {
        .object([
            "credential": Self.json(credential), "scope": .null,
            "expect": .object(["outcome": .string("fails"), "error": .string("wrongCredentials")]),
        ])
    }

    func withOtherCredentials(_ manifest: ManifestJSON, _ views: [ManifestJSON]) -> ManifestJSON {
        guard case .object(var members) = manifest else { return manifest }
        members["otherCredentials"] = .array(views)
        return .object(members)
    }

    /// A generic password in `group` (the default group when empty).
    func item(_ account: String, _ secret: String, group: String) -> GenericPassword {
        var item = GenericPassword(service: "app.example.com", account: account, password: secret, accessGroup: group)
        item.label = "\(account) in \(group.isEmpty ? "the default group" : group)"
        return item
    }

    // MARK: The fixtures

    /// SPEC.md §42: an item in the default group, an item in a group of its own, and a credential reaching only
    /// that group.
    func workedExampleV3(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 50)
        try fixture.add(GenericPassword(service: "example", account: "ann", password: "hunter2"))
        try fixture.add(GenericPassword(service: "example", account: "bob", password: "swordfish", accessGroup: Self.mailGroup))
        try fixture.addCredential(Self.mailPassword, scope: [Self.mailGroup])
        return withOtherCredentials(
            opens(fixture, "SPEC.md §42: ann's password in the default group, bob's in group \(Self.mailGroup) (adding the group rewrites the file), then a password reaching only \(Self.mailGroup)"),
            [view(fixture, Self.mailPassword, scope: [Self.mailGroup]), refused(.password("hunter2"))])
    }

    func twoKeySlotsV3(_ name: String) throws -> ManifestJSON {
        let key = RawKey(bytes: FixtureGenerator.rawKey)
        let fixture = try newKeychain(name, seed: 51)
        try fixture.add(mailPassword())
        try fixture.addCredential(key.credential)
        return withOtherCredentials(
            opens(fixture, "a password slot, then a raw-key slot added (a version 3 file is created with one credential); opened with the key", credentialJSON: key.json),
            [view(fixture, Self.passwordCredential, scope: nil)])
    }

    /// The default group and two named groups, every class of item, updates and deletions in each, and three
    /// scoped credentials: one per group and one reaching both.
    func groupsBase(_ name: String, seed: UInt64) throws -> FixtureKeychain {
        let fixture = try newKeychain(name, seed: seed)
        try fixture.add(item("dana", "default secret 1", group: ""))
        try fixture.add(item("eli", "default secret 2", group: ""))
        for index in 0..<3 { try fixture.add(item("mail\(index)", "mail secret \(index)", group: Self.mailGroup)) }
        var internet = InternetPassword(server: "imap.example.com", account: "ann")
        internet.port = 993
        internet.value = Array("imap secret".utf8)
        internet.accessGroup = Self.mailGroup
        try fixture.add(internet)
        var certificate = try Certificate(der: certificateDER())
        certificate.accessGroup = Self.chatGroup
        try fixture.add(certificate)
        try fixture.addAll([(try item("chat0", "chat secret 0", group: Self.chatGroup).attributes, Array("chat secret 0".utf8)),
                            (try item("chat1", "chat secret 1", group: Self.chatGroup).attributes, Array("chat secret 1".utf8))])
        try fixture.update(.genericPassword(service: "app.example.com", account: "mail1"), setting: [.comment: .string("changed")],
                           secret: Array("mail secret 1, changed".utf8))
        try fixture.delete(.genericPassword(service: "app.example.com", account: "mail2"))
        try fixture.delete(.genericPassword(service: "app.example.com", account: "eli"))
        try fixture.addCredential(Self.mailPassword, scope: [Self.mailGroup])
        try fixture.addCredential(Self.chatPassword, scope: [Self.chatGroup])
        try fixture.addCredential(Self.sharedPassword, scope: [Self.mailGroup, Self.chatGroup])
        return fixture
    }

    func groupViews(_ fixture: FixtureKeychain) -> [ManifestJSON] {
        [view(fixture, Self.mailPassword, scope: [Self.mailGroup]), view(fixture, Self.chatPassword, scope: [Self.chatGroup]),
         view(fixture, Self.sharedPassword, scope: [Self.mailGroup, Self.chatGroup]), refused(.password("the mail app's Password"))]
    }

    func groupsV3(_ name: String) throws -> ManifestJSON {
        let fixture = try groupsBase(name, seed: 52)
        return withOtherCredentials(
            opens(fixture, "items in the default group, \(Self.mailGroup) (generic and internet passwords) and \(Self.chatGroup) (a certificate, a transaction), updated and deleted in each; then a password for each named group and one for both. Each credential sees its groups' items and no other"),
            groupViews(fixture))
    }

    func scopedWritesV3(_ name: String) throws -> ManifestJSON {
        let fixture = try groupsBase(name, seed: 53)
        let mail = try fixture.open(with: Self.mailPassword, seed: 54)
        try fixture.through(mail) {
            try fixture.add(item("mail3", "mail secret 3", group: Self.mailGroup))
            try fixture.update(.genericPassword(service: "app.example.com", account: "mail0"), setting: [:],
                               secret: Array("mail secret 0, changed by the mail app".utf8))
            try fixture.delete(.genericPassword(service: "app.example.com", account: "mail1"))
        }
        try fixture.add(item("fay", "default secret 3", group: ""))
        return withOtherCredentials(
            opens(fixture, "the groups fixture, then the password reaching only \(Self.mailGroup) adds, updates and deletes there (its commits carry the other groups' heads as they were), then a full holder adds to the default group"),
            groupViews(fixture))
    }

    func scopedCompactionV3(_ name: String) throws -> ManifestJSON {
        let fixture = try groupsBase(name, seed: 55)
        let mail = try fixture.open(with: Self.mailPassword, seed: 56)
        try fixture.through(mail) {
            try fixture.add(item("mail3", "mail secret 3", group: Self.mailGroup))
            try fixture.compact()
            try fixture.add(item("mail4", "mail secret 4", group: Self.mailGroup))
        }
        try fixture.add(item("fay", "default secret 3", group: ""))
        return withOtherCredentials(
            opens(fixture, "the groups fixture, then the password reaching only \(Self.mailGroup) compacts the file (SPEC.md §38.7: the other groups' segments copied byte for byte, chain start entries in the header) and adds before and after; then a full holder adds"),
            groupViews(fixture))
    }

    func scopedPasswordChangeV3(_ name: String) throws -> ManifestJSON {
        let fixture = try groupsBase(name, seed: 57)
        let newMailPassword = Credential.password("the mail app's new password")
        let mail = try fixture.open(with: Self.mailPassword, seed: 58)
        try fixture.through(mail) {
            try fixture.changeCredentialKeepingKeys(from: Self.mailPassword, to: newMailPassword)
            try fixture.add(item("mail3", "mail secret 3", group: Self.mailGroup))
        }
        return withOtherCredentials(
            opens(fixture, "the groups fixture, then the password reaching only \(Self.mailGroup) is changed by its holder, keeping the keys (a scoped rewrite, SPEC.md §38.7): the old one opens nothing"),
            [view(fixture, newMailPassword, scope: [Self.mailGroup]), refused(Self.mailPassword),
             view(fixture, Self.chatPassword, scope: [Self.chatGroup]), view(fixture, Self.sharedPassword, scope: [Self.mailGroup, Self.chatGroup])])
    }

    func keysRenewedV3(_ name: String) throws -> ManifestJSON {
        let fixture = try groupsBase(name, seed: 59)
        let newPassword = Credential.password(Self.newPassword)
        try fixture.changeCredentialRenewingKeys(from: Self.passwordCredential, to: newPassword)
        try fixture.add(item("mail3", "mail secret 3", group: Self.mailGroup))
        try fixture.add(item("chat2", "chat secret 2", group: Self.chatGroup))
        return withOtherCredentials(
            opens(fixture, "the groups fixture, then the full password changed renewing every key (SPEC.md §38.6): the scoped passwords open through the grants made to their slots; the old password opens nothing",
                  credentialJSON: Self.json(newPassword)),
            groupViews(fixture) + [refused(Self.passwordCredential)])
    }

    func headerTwoPagesV3(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 60)
        let keys = (0..<10).map { index in RawKey(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ index) }) }
        for key in keys { try fixture.addCredential(key.credential) }
        for index in 0..<30 { try fixture.add(item("user\(index)", "secret \(index)", group: index % 3 == 0 ? Self.mailGroup : "")) }
        try fixture.addCredential(Self.mailPassword, scope: [Self.mailGroup])
        return withOtherCredentials(
            opens(fixture, "ten raw-key credentials and a scoped password: each header run takes two pages, so the commit slots, run B and the log start 4,096 bytes later (SPEC.md §30.2)"),
            [view(fixture, keys[9].credential, json: keys[9].json, scope: nil), view(fixture, Self.mailPassword, scope: [Self.mailGroup])])
    }

    enum HeaderRunDamage { case secondPageBurst, runADestroyed }

    /// `header-two-pages` with run A damaged: a 256-byte burst in its second page, which that page's parity
    /// repairs (SPEC.md §31.3), or both of its pages overwritten, so that run B is found by its own first page
    /// (§31.4 step 3).
    func headerTwoPagesDamagedV3(_ name: String, _ damage: HeaderRunDamage) throws -> ManifestJSON {
        let base = try headerTwoPagesV3(name)
        guard case .object(let members) = base, case .array(let views)? = members["otherCredentials"] else {
            throw FixtureError("the header-two-pages manifest has no other credentials")
        }
        let path = path(name)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        guard bytes.count > 40_960, bytes[9] == 3 else { throw FixtureError("the file is not a version 3 file of two-page runs") }
        var random = FixtureRandom(seed: 64)
        let description: String
        switch damage {
        case .secondPageBurst:
            for offset in (4_096 + 1_000)..<(4_096 + 1_256) { bytes[offset] = UInt8(truncatingIfNeeded: random.next()) }
            description = "header-two-pages with 256 random bytes in the data of run A's second page (file offsets 5,096 ..< 5,352): that page's parity repairs them (SPEC.md §31.3), and the reader reports a repair"
        case .runADestroyed:
            for offset in 0..<8_192 { bytes[offset] = UInt8(truncatingIfNeeded: random.next()) }
            description = "header-two-pages with both pages of run A overwritten by random bytes: no page count can be read there, so run B is found at file offset 32,768 by its own first page (SPEC.md §31.4 step 3); the reader reports a repair"
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return withRepaired(.object(members.merging(["description": .string(description),
                                                     "otherCredentials": .array(views.map(withRepaired))]) { $1 }))
    }

    /// `groups` with a raw key added as a second full credential, then two rotations and a group added between
    /// them: every slot but the writer's holds three grants, each opened with the `ρ` of the key set before it
    /// (SPEC.md §33.5, §33.7).
    func grantsPiledUpV3(_ name: String) throws -> ManifestJSON {
        let fixture = try groupsBase(name, seed: 65)
        let key = RawKey(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        try fixture.addCredential(key.credential)
        let second = Credential.password(Self.newPassword)
        let third = Credential.password("a third password, after two rotations")
        try fixture.changeCredentialRenewingKeys(from: Self.passwordCredential, to: second)
        try fixture.add(item("note0", "notes secret 0", group: Self.notesGroup))
        try fixture.changeCredentialRenewingKeys(from: second, to: third)
        try fixture.add(item("mail3", "mail secret 3", group: Self.mailGroup))
        try fixture.add(item("chat2", "chat secret 2", group: Self.chatGroup))
        return withOtherCredentials(
            opens(fixture, "the groups fixture and a raw key for the whole keychain; then the full password changed renewing every key, \(Self.notesGroup) added, and the password changed renewing every key again (SPEC.md §38.4, §38.6): the raw key's slot and each scoped slot hold three grants, which open in turn; the two earlier full passwords open nothing",
                  credentialJSON: Self.json(third)),
            groupViews(fixture) + [view(fixture, key.credential, json: key.json, scope: nil), refused(Self.passwordCredential), refused(second)])
    }

    /// `groups`, then scoped rewrites by different holders one after the other, each carrying the other groups'
    /// segments, some of them carried already by the rewrite before (SPEC.md §38.7).
    func scopedRewritesInTurnV3(_ name: String) throws -> ManifestJSON {
        let fixture = try groupsBase(name, seed: 66)
        let mail = try fixture.open(with: Self.mailPassword, seed: 67)
        try fixture.through(mail) {
            try fixture.add(item("mail3", "mail secret 3", group: Self.mailGroup))
            try fixture.compact()
        }
        let chat = try fixture.open(with: Self.chatPassword, seed: 68)
        try fixture.through(chat) {
            try fixture.delete(.genericPassword(service: "app.example.com", account: "chat0"))
            try fixture.compact()
            try fixture.add(item("chat2", "chat secret 2", group: Self.chatGroup))
        }
        try fixture.through(mail) {
            try mail.refresh()
            try fixture.compact()
            try fixture.add(item("mail4", "mail secret 4", group: Self.mailGroup))
        }
        try fixture.add(item("fay", "default secret 3", group: ""))
        return withOtherCredentials(
            opens(fixture, "the groups fixture, then \(Self.mailGroup)'s holder compacts, \(Self.chatGroup)'s holder deletes and compacts, and \(Self.mailGroup)'s holder compacts again (SPEC.md §38.7: each scoped rewrite copies the other groups' segments, among them segments an earlier scoped rewrite copied), with adds between; then a full holder adds"),
            groupViews(fixture))
    }

    /// `groups` with a zeroed 4 KiB sector at the log's start and header run A overwritten: every credential,
    /// scoped ones too, repairs both through parity and run B, and reports a repair.
    func groupsRepairedV3(_ name: String) throws -> ManifestJSON {
        let fixture = try groupsBase(name, seed: 69)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
        guard bytes.count >= LayoutV2.logStart + 4_096 else { throw FixtureError("the groups file is shorter than one sector of log") }
        var random = FixtureRandom(seed: 70)
        for offset in LayoutV2.logStart..<(LayoutV2.logStart + 4_096) { bytes[offset] = 0 }
        for offset in 0..<LayoutV2.headerCopyLength { bytes[offset] = UInt8(truncatingIfNeeded: random.next()) }
        try Data(bytes).write(to: URL(fileURLWithPath: fixture.path))
        return withOtherCredentials(
            withRepaired(opens(fixture, "the groups fixture with the log's first 4 KiB sector zeroed (file offset 32,768) and header run A overwritten by random bytes: every credential, scoped ones too, reads the log through its parity and the header through run B, and reports a repair")),
            groupViews(fixture).map(withRepaired))
    }

    /// SPEC.md §31.5 step 7: the first 16 bytes say version 3 with a flag this reader does not know, and neither
    /// run holds a header. A reader that reads version 3 answers `corrupted`, not `unsupportedVersion`.
    func headerUnreadableV3(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 61)
        try fixture.add(mailPassword())
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
        guard bytes[9] == 3 else { throw FixtureError("the file is not of format version 3") }
        var random = FixtureRandom(seed: 62)
        bytes[10] |= 0x80
        for offset in Array(16..<LayoutV2.headerCopyLength) + Array(LayoutV2.headerBOffset..<LayoutV2.logStart) {
            bytes[offset] = UInt8(truncatingIfNeeded: random.next())
        }
        try Data(bytes).write(to: URL(fileURLWithPath: fixture.path))
        return fails("the first 16 bytes are the magic and version 3 with an unknown flag set; the rest of both header runs is random bytes: the file is version 3, and its header cannot be read (SPEC.md §31.5)",
                     credential: Self.passwordJSON, error: "corrupted", range: 0..<LayoutV2.logStart)
    }
}
