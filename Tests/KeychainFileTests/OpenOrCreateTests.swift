import Foundation
import Testing
@testable import KeychainFile

/// `Keychain.openOrCreate`: creates a keychain where there is nothing, opens what is there, and never replaces
/// an existing file, whatever is wrong with it.
@Suite("Open or create")
struct OpenOrCreateTests {
    static let fast = Keychain.CreationOptions(passwordIterations: .insecureForTesting(1_000))

    @Test("Where nothing exists it creates a keychain; afterwards it opens that one, items and all")
    func createsThenOpens() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("secrets.kcf")
        let first = try Keychain.openOrCreate(at: path, credential: TestKeychain.password, creationOptions: Self.fast)
        #expect(first.count == 0 && first.head.epoch == 1)
        try first.setPassword("s3cret", forService: "mail", account: "ann")
        let second = try Keychain.openOrCreate(at: path, credential: TestKeychain.password, creationOptions: Self.fast)
        #expect(try second.password(forService: "mail", account: "ann") == "s3cret")
        #expect(second.head == first.head)
    }

    @Test("Creation options apply to a new file, open options to an existing one")
    func optionsApply() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("secrets.kcf")
        let recovery = Credential.password("recovery words")
        let created = try Keychain.openOrCreate(
            at: path, credential: TestKeychain.password,
            creationOptions: .init(passwordIterations: .insecureForTesting(1_000), additionalCredentials: [recovery]))
        #expect(try created.keySlots().count == 2)
        #expect(try Keychain.openOrCreate(at: path, credential: recovery).count == 0)
        let later = try Keychain.create(at: directory.file("other.kcf"), credential: TestKeychain.password, options: Self.fast)
        try later.setPassword("1", forService: "s", account: "a")
        try later.setPassword("2", forService: "s", account: "a")
        // A head the file does not contain (another keychain's, two records on) is refused when opening.
        #expect(throws: KeychainError.rolledBack(expected: later.head, found: created.head)) {
            try Keychain.openOrCreate(at: path, credential: TestKeychain.password, options: .init(expectedHead: later.head))
        }
    }

    @Test("An existing file is never replaced: a wrong password, a damaged file or another kind of file fails as open does")
    func neverReplaces() throws {
        let directory = TemporaryDirectory()
        let keychainPath = directory.file("secrets.kcf")
        _ = try TestKeychain.create(in: directory, name: "secrets.kcf")
        let keychainBytes = try fileBytes(keychainPath)
        #expect(throws: KeychainError.wrongCredentials) {
            try Keychain.openOrCreate(at: keychainPath, credential: .password("wrong"), creationOptions: Self.fast)
        }
        #expect(try fileBytes(keychainPath) == keychainBytes)

        let notes = directory.file("notes.txt")
        try Data("not a keychain\n".utf8).write(to: URL(fileURLWithPath: notes))
        #expect(throws: KeychainError.notAKeychain) {
            try Keychain.openOrCreate(at: notes, credential: TestKeychain.password, creationOptions: Self.fast)
        }
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "not a keychain\n")

        let empty = directory.file("empty.kcf")
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        #expect(throws: (any Error).self) {
            try Keychain.openOrCreate(at: empty, credential: TestKeychain.password, creationOptions: Self.fast)
        }
        #expect(try fileBytes(empty).isEmpty)
    }

    @Test("A missing directory or a symbolic link that leads nowhere is an error, and nothing is created")
    func refusesWhereItCannotCreate() throws {
        let directory = TemporaryDirectory()
        let missing = directory.file("no/such/dir/secrets.kcf")
        do {
            _ = try Keychain.openOrCreate(at: missing, credential: TestKeychain.password, creationOptions: Self.fast)
            Issue.record("a keychain was made in a missing directory")
        } catch .io(_, let code, _) {
            #expect(code == ENOENT)
        } catch {
            Issue.record("unexpected \(error)")
        }
        let link = directory.file("link.kcf")
        let target = directory.file("elsewhere.kcf")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(throws: KeychainError.invalidParameter("")) {
            try Keychain.openOrCreate(at: link, credential: TestKeychain.password, creationOptions: Self.fast)
        }
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test("When another process creates the file after this call found nothing, this call opens that file")
    func racingCreator() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("secrets.kcf")
        let racing = RacingFileSystem(racingAt: path) { path in
            let other = try Keychain.create(at: path, credential: TestKeychain.password, options: Self.fast)
            try other.setPassword("theirs", forService: "mail", account: "ann")
        }
        let keychain = try Keychain.openOrCreate(
            at: path, credential: TestKeychain.password, options: .init(), creationOptions: Self.fast,
            random: RandomSource(SystemRandomNumberGenerator()), clock: { Date() }, fileSystem: racing)
        #expect(racing.hasRaced)
        #expect(try keychain.password(forService: "mail", account: "ann") == "theirs")
    }
}
