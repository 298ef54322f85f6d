import Foundation
import Testing
@testable import KeychainFile

/// A keychain opened with a password that another process's rotating change took away (SPEC.md §15.2, §16) fails
/// every later call with `wrongCredentials`. Trying the password costs a key derivation (PBKDF2 or Argon2id:
/// the costly part of opening, on purpose); it is made once for each header the file holds, not once for each
/// call, so that a process left behind cannot be made to spend its time deriving the same refused key. When the
/// header changes again, the password is tried once more: the file may have been restored, or the password added
/// back.
@Suite("A credential rotated away is tried once per header, not once per call")
struct RotatedAwayCredentialTests {
    static let fast = PasswordIterations.insecureForTesting(1_000)

    /// The file the other process changes: version 2; version 1 kept at version 1; version 1, which the change
    /// rewrites as version 2 (the keychain left behind then finds another format at the path).
    enum Start: String, CaseIterable, CustomStringConvertible, Sendable {
        case versionTwo, versionOneKept, versionOneUpgraded
        var description: String { rawValue }
    }

    /// Runs `body` and returns how many key derivations it made on this task.
    static func derivations(_ body: () throws -> Void) rethrows -> Int {
        let counter = KeyDerivationCounter()
        try counter.counting(body)
        return counter.count
    }

    /// Reads, writes and a refresh through `keychain`, each of which must fail with `wrongCredentials`.
    static func callsFail(_ keychain: Keychain, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for round in 0..<3 {
            #expect(throws: KeychainError.wrongCredentials, "\(label), round \(round)", sourceLocation: sourceLocation) {
                _ = try keychain.search(Query(.genericPassword, limit: .all))
            }
            #expect(throws: KeychainError.wrongCredentials, "\(label), round \(round)", sourceLocation: sourceLocation) {
                _ = try keychain.dataIfPresent(forService: "svc", account: "before") as [UInt8]?
            }
            #expect(throws: KeychainError.wrongCredentials, "\(label), round \(round)", sourceLocation: sourceLocation) {
                try keychain.setPassword("refused", forService: "svc", account: "left behind")
            }
            #expect(throws: KeychainError.wrongCredentials, "\(label), round \(round)", sourceLocation: sourceLocation) {
                try keychain.refresh()
            }
        }
    }

    @Test("After another process's rotation: one derivation for any number of calls; one more when the header changes; the password added back opens the file again",
          arguments: Start.allCases)
    func oneDerivationPerHeader(start: Start) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        var options = TestKeychain.options(formatVersion: start == .versionTwo ? 2 : 1)
        options.keepsFormatVersion = start == .versionOneKept
        let changer = try Keychain.create(at: path, credential: .password("old"), options: options)
        try changer.add(GenericPassword(service: "svc", account: "before", password: "written before the change"))
        let leftBehind = try Keychain.open(
            at: path, credential: .password("old"), options: Keychain.OpenOptions(keepsFormatVersion: start == .versionOneKept))
        #expect(try leftBehind.password(forService: "svc", account: "before") == "written before the change")

        try changer.changePassword(from: "old", to: "new", iterations: Self.fast)
        #expect(changer.fileFormatVersion == (start == .versionOneKept ? 1 : 2))
        let afterRotation = Self.derivations { Self.callsFail(leftBehind, "\(start), after the rotation") }
        #expect(afterRotation == 1, "\(start): \(afterRotation) derivations for 12 calls after the rotation")

        // Another process's commit changes the file but not its header: still refused without deriving.
        try changer.add(GenericPassword(service: "svc", account: "later", password: "appended"))
        let afterAppend = Self.derivations { Self.callsFail(leftBehind, "\(start), after an append") }
        #expect(afterAppend == 0, "\(start): \(afterAppend) derivations after an append that kept the header")

        // A compaction writes a new header (a new epoch, the same slot): the password is tried once more.
        try changer.compact()
        let afterCompaction = Self.derivations { Self.callsFail(leftBehind, "\(start), after a compaction") }
        #expect(afterCompaction == 1, "\(start): \(afterCompaction) derivations after a compaction")

        // The old password added back, first of the slots: the next call opens the file with it (one derivation)
        // and the keychain goes on, with no derivation after that.
        try changer.rotateMasterKey(credentials: [.password("old"), .password("new")], iterations: Self.fast)
        let addedBack = try Self.derivations {
            try leftBehind.refresh()
            #expect(try leftBehind.password(forService: "svc", account: "later") == "appended", "\(start)")
            try leftBehind.setPassword("goes on", forService: "svc", account: "left behind")
            #expect(leftBehind.count == 3, "\(start)")
        }
        #expect(addedBack == 1, "\(start): \(addedBack) derivations once the password was added back")
        #expect(try Keychain.open(at: path, credential: .password("new")).password(forService: "svc", account: "left behind") == "goes on")
    }
}
