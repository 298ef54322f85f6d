import Foundation
import Testing
@testable import KeychainFile
import KeychainCrypto

@Suite("Keychain: create, open, credentials")
struct KeychainCredentialTests {
    @Test("A new keychain reopens with its password; a wrong password is wrongCredentials")
    func passwords() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("a.kcf")
        do {
            let keychain = try Keychain.create(at: path, credential: .password("pässword"), options: TestKeychain.fastOptions)
            try keychain.add(GenericPassword(service: "s", account: "a", password: "p").attributes, secret: Array("p".utf8))
        }
        let reopened = try Keychain.open(at: path, credential: .password("pässword"))
        #expect(reopened.count == 1)
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: path, credential: .password("password")) }
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: path, credential: .key(SymmetricKey(size: .bits256))) }
        #expect(throws: KeychainError.invalidParameter("")) { try Keychain.open(at: path, credential: .password("")) }
    }

    @Test("A password is NFC-normalised: composed and decomposed forms open the same file")
    func nfc() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("nfc.kcf")
        let composed = "caf\u{E9}"       // é as one scalar
        let decomposed = "cafe\u{301}"   // e + combining acute
        #expect(Array(composed.unicodeScalars) != Array(decomposed.unicodeScalars))
        _ = try Keychain.create(at: path, credential: .password(decomposed), options: TestKeychain.fastOptions)
        #expect(try Keychain.open(at: path, credential: .password(composed)).count == 0)
    }

    @Test("A raw 32-byte key opens its keychain; other sizes are refused")
    func rawKey() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("key.kcf")
        let key = SymmetricKey(size: .bits256)
        _ = try Keychain.create(at: path, credential: .key(key))
        #expect(try Keychain.open(at: path, credential: .key(key)).count == 0)
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: path, credential: .key(SymmetricKey(size: .bits256))) }
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: path, credential: .password("x")) }
        #expect(throws: KeychainError.invalidParameter("")) { try Keychain.open(at: path, credential: .key(SymmetricKey(size: .bits128))) }
    }

    @Test("Two key slots: either credential opens the file")
    func twoSlots() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("two.kcf")
        let key = SymmetricKey(size: .bits256)
        var options = TestKeychain.fastOptions
        options.additionalCredentials = [.key(key)]
        _ = try Keychain.create(at: path, credential: .password("one"), options: options)
        #expect(try Keychain.open(at: path, credential: .password("one")).count == 0)
        #expect(try Keychain.open(at: path, credential: .key(key)).count == 0)
    }

    @Test("Files are created with mode 0600 and never over an existing file")
    func permissions() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("mode.kcf")
        _ = try TestKeychain.create(in: directory, name: "mode.kcf")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(throws: KeychainError.invalidParameter("")) { try TestKeychain.create(in: directory, name: "mode.kcf") }
        // No temporary files are left behind; the lock file (SPEC.md §16) is 0600 too.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["mode.kcf", "mode.kcf.lock"])
        let lockAttributes = try FileManager.default.attributesOfItem(atPath: path + ".lock")
        #expect((lockAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test("Opening something that is not a keychain, or a missing file, is a typed error")
    func notAKeychain() throws {
        let directory = TemporaryDirectory()
        try writeFileBytes(Array("hello, this is not a keychain file at all".utf8), to: directory.file("text"))
        #expect(throws: KeychainError.notAKeychain) { try Keychain.open(at: directory.file("text"), credential: TestKeychain.password) }
        try writeFileBytes([], to: directory.file("empty"))
        #expect(throws: KeychainError.notAKeychain) { try Keychain.open(at: directory.file("empty"), credential: TestKeychain.password) }
        #expect(throws: KeychainError.io(operation: "", errno: 0, path: "")) {
            try Keychain.open(at: directory.file("missing"), credential: TestKeychain.password)
        }
    }
}

@Suite("Keychain: items")
struct KeychainItemTests {
    @Test("Apple's flow: save, load, update and delete a generic password by service and account")
    func genericPasswordFlow() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        let item = GenericPassword(service: "com.example.mail", account: "ann@example.com", password: "first")
        try keychain.add(item.attributes, secret: item.value ?? [])

        let query = Query.genericPassword(service: "com.example.mail", account: "ann@example.com")
        var found = try keychain.search(query, returning: [.data, .attributes])
        #expect(found.count == 1)
        #expect(found[0].value == Array("first".utf8))
        #expect(found[0].attributes?[.service] == .string("com.example.mail"))
        #expect(found[0].attributes?[.creationDate] != nil)

        #expect(try keychain.update(query, setting: [.label: .string("Mail")], secret: Array("second".utf8)) == 1)
        found = try keychain.search(query, returning: [.data, .attributes])
        #expect(found[0].value == Array("second".utf8))
        #expect(found[0].attributes?[.label] == .string("Mail"))

        #expect(try keychain.delete(query) == 1)
        #expect(throws: KeychainError.itemNotFound) { try keychain.search(query) }
        #expect(throws: KeychainError.itemNotFound) { try keychain.delete(query) }
        #expect(throws: KeychainError.itemNotFound) { try keychain.update(query, setting: [.label: .string("x")]) }
    }

    @Test("Access groups: the same service and account in two groups are two items")
    func accessGroups() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        var shared = GenericPassword(service: "sync", account: "token", password: "shared")
        shared.accessGroup = "group.example.shared"
        var own = GenericPassword(service: "sync", account: "token", password: "own")
        own.accessGroup = "app.example"
        try keychain.add(shared.attributes, secret: shared.value ?? [])
        try keychain.add(own.attributes, secret: own.value ?? [])
        #expect(throws: KeychainError.duplicateItem) { try keychain.add(own.attributes, secret: []) }

        var query = Query.genericPassword(service: "sync", account: "token")
        #expect(try keychain.search(query).count == 2)
        query.attributes[.accessGroup] = .string("group.example.shared")
        let result = try keychain.search(query, returning: [.data])
        #expect(result.count == 1)
        #expect(result[0].value == Array("shared".utf8))
    }

    @Test("Duplicate adds and colliding updates are duplicateItem; a failed operation changes nothing")
    func uniqueness() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        try keychain.add(GenericPassword(service: "s", account: "a", password: "1").attributes, secret: [1])
        try keychain.add(GenericPassword(service: "s", account: "b", password: "2").attributes, secret: [2])
        let headBefore = keychain.head
        let sizeBefore = try fileBytes(keychain.path).count
        #expect(throws: KeychainError.duplicateItem) {
            try keychain.add(GenericPassword(service: "s", account: "a", password: "3").attributes, secret: [3])
        }
        #expect(throws: KeychainError.duplicateItem) {
            try keychain.update(.genericPassword(service: "s", account: "b"), setting: [.account: .string("a")])
        }
        // Synchronizable items are a separate key space.
        var synced = GenericPassword(service: "s", account: "a", password: "4")
        synced.synchronizable = true
        try keychain.add(synced.attributes, secret: [4])
        #expect(keychain.count == 3)
        #expect(try keychain.search(.genericPassword(service: "s", account: "a")).count == 1)
        var any = Query.genericPassword(service: "s", account: "a")
        any.synchronizable = .any
        #expect(try keychain.search(any).count == 2)
        #expect(keychain.head.sequence == headBefore.sequence + 1)
        #expect(try fileBytes(keychain.path).count > sizeBefore)
    }

    @Test("A batch commits as one record; a throwing batch writes nothing")
    func batches() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<50 {
                try batch.add(GenericPassword(service: "bulk", account: "user\(index)", password: "pw\(index)").attributes,
                              secret: Array("pw\(index)".utf8))
            }
            try batch.update(.genericPassword(service: "bulk", account: "user7"), setting: [.comment: .string("seven")])
            try batch.delete(.genericPassword(service: "bulk", account: "user9"))
        }
        #expect(keychain.head.sequence == 1)
        #expect(keychain.count == 49)
        let sizeAfter = try fileBytes(keychain.path).count
        #expect(throws: KeychainError.duplicateItem) {
            try keychain.batch { (batch) throws(KeychainError) in
                try batch.add(GenericPassword(service: "bulk", account: "new", password: "x").attributes, secret: [])
                try batch.add(GenericPassword(service: "bulk", account: "user1", password: "x").attributes, secret: [])
            }
        }
        #expect(keychain.count == 49)
        #expect(keychain.head.sequence == 1)
        #expect(try fileBytes(keychain.path).count == sizeAfter)

        let reopened = try Keychain.open(at: keychain.path, credential: TestKeychain.password)
        #expect(reopened.count == 49)
        let seven = try reopened.search(.genericPassword(service: "bulk", account: "user7"), returning: [.attributes, .data])
        #expect(seven[0].attributes?[.comment] == .string("seven"))
        #expect(seven[0].value == Array("pw7".utf8))
    }

    @Test("Updates in a batch keep the secret each item was last given in the batch, through deletes, re-adds and later adds")
    func stagedSecrets() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        try keychain.add(GenericPassword(service: "s", account: "before", password: "old"))
        func put(_ batch: inout Batch, _ account: String, _ secret: String) throws(KeychainError) {
            try batch.add(GenericPassword(service: "s", account: account).attributes, secret: Array(secret.utf8))
        }
        try keychain.batch { (batch) throws(KeychainError) in
            try put(&batch, "a", "a1")
            try put(&batch, "b", "b1")
            // The first update that needs a staged secret; later stagings must be seen too.
            try batch.update(.genericPassword(service: "s", account: "a"), setting: [.comment: .string("1")])
            try batch.update(.genericPassword(service: "s", account: "b"), setting: [:], secret: Array("b2".utf8))
            try batch.update(.genericPassword(service: "s", account: "b"), setting: [.comment: .string("2")])
            try batch.delete(.genericPassword(service: "s", account: "a"))
            try put(&batch, "a", "a3")
            try put(&batch, "c", "c1")
            try batch.update(.genericPassword(service: "s", account: "a"), setting: [.label: .string("again")])
            try batch.update(.genericPassword(service: "s", account: "c"), setting: [.label: .string("later")])
            try batch.update(.genericPassword(service: "s", account: "before"), setting: [.label: .string("old one")])
        }
        let reopened = try Keychain.open(at: keychain.path, credential: TestKeychain.password)
        for (account, secret) in [("a", "a3"), ("b", "b2"), ("c", "c1"), ("before", "old")] {
            #expect(try reopened.data(forService: "s", account: account) == Array(secret.utf8), "\(account)")
        }
        #expect(reopened.count == 4)
    }

    @Test("Searches decrypt secrets only when asked, and never return an empty success")
    func returnOptions() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        let reference = try keychain.add(GenericPassword(service: "s", account: "a", password: "p").attributes, secret: [9, 9])
        let plain = try keychain.search(.genericPassword(service: "s", account: "a"))
        #expect(plain[0].value == nil)
        #expect(plain[0].attributes != nil)
        let referenceOnly = try keychain.search(.genericPassword(service: "s"), returning: [.persistentReference])
        #expect(referenceOnly[0].persistentReference == reference)
        #expect(referenceOnly[0].attributes == nil)
        #expect(try keychain.secret(for: reference) == [9, 9])
        var byReference = Query(.genericPassword)
        byReference.persistentReference = reference
        #expect(try keychain.search(byReference).count == 1)
        #expect(throws: KeychainError.itemNotFound) { try keychain.search(.genericPassword(service: "other")) }
    }

    @Test("Internet password by server, protocol and port")
    func internetPassword() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        var item = InternetPassword(server: "example.com", account: "ann")
        item.protocolType = .https
        item.port = 443
        item.path = "/login"
        item.value = Array("web-secret".utf8)
        try keychain.add(item.attributes, secret: item.value ?? [])
        var other = item
        other.port = 8443
        try keychain.add(other.attributes, secret: Array("other".utf8))

        var query = Query(.internetPassword)
        query.attributes = [.server: .string("example.com"), .protocolType: .integer(Int64(InternetProtocol.https.rawValue)), .port: .integer(443)]
        let found = try keychain.search(query, returning: [.data, .attributes])
        #expect(found.count == 1)
        #expect(found[0].value == Array("web-secret".utf8))
        #expect(found[0].attributes?[.path] == .string("/login"))
    }

    @Test("Items survive reopening, with every attribute and secret intact")
    func persistence() throws {
        let directory = TemporaryDirectory()
        let path: String
        var expected: [PersistentReference: (ItemAttributes, [UInt8])] = [:]
        do {
            let keychain = try TestKeychain.create(in: directory)
            path = keychain.path
            for index in 0..<30 {
                var item = GenericPassword(service: "svc\(index % 3)", account: "acct\(index)", password: "secret-\(index)")
                item.label = "label \(index)"
                item.generic = [UInt8](repeating: UInt8(index), count: index)
                let reference = try keychain.add(item.attributes, secret: item.value ?? [])
                expected[reference] = (try keychain.search({ var q = Query(.genericPassword); q.persistentReference = reference; return q }())[0].attributes!, item.value ?? [])
            }
        }
        let reopened = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(reopened.count == 30)
        for (reference, (attributes, secret)) in expected {
            var query = Query(.genericPassword)
            query.persistentReference = reference
            let found = try reopened.search(query, returning: [.attributes, .data])
            #expect(found[0].attributes == attributes)
            #expect(found[0].value == secret)
        }
    }
}
