import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

/// `Keychain.secretFingerprint` against SPEC.md §43.8's definition, computed here from the keys the log holds.
@Suite("Secret fingerprints")
struct SecretFingerprintTests {
    private func hmac(_ bytes: [UInt8], _ key: SymmetricKey) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: bytes, using: key))
    }

    private let label = Array("KeychainFile secret fingerprint".utf8)

    @Test("Version 2: keyed by the master key, over the item id and the secret")
    func versionTwo() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: 2)
        let id = try keychain.add(try GenericPassword(service: "s", account: "a", password: "hunter2")).itemID
        let key = SymmetricKey(data: hmac(label + (try keychain.fileID()), keychain.log.masterKey))
        let expected = Array(hmac(id.bytes + Array("hunter2".utf8), key).prefix(8))
        #expect(try keychain.secretFingerprint(of: Array("hunter2".utf8), itemID: id) == expected)
    }

    @Test("Version 3: keyed by the item's group's secret key, not by the log key every scoped credential holds")
    func versionThree() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: 3)
        let id = try keychain.add(try GenericPassword(service: "s", account: "a", accessGroup: "team", value: Array("hunter2".utf8))).itemID
        let log = try #require(keychain.log as? RecordLogV3)
        let keyID = try #require(log.state.groups.keyID(named: "team"))
        let groupKeys = try #require(log.state.groups.byKeyID[keyID])
        let fileID = try keychain.fileID()
        let secret = Array("hunter2".utf8)
        let fingerprint = try keychain.secretFingerprint(of: secret, itemID: id)
        let key = SymmetricKey(data: hmac(label + fileID + [keyID], groupKeys.secretKey))
        #expect(fingerprint == Array(hmac(id.bytes + secret, key).prefix(8)))
        let byLogKey = SymmetricKey(data: hmac(label + fileID, log.masterKey))
        #expect(fingerprint != Array(hmac(id.bytes + secret, byLogKey).prefix(8)))
        #expect(throws: KeychainError.itemNotFound) { try keychain.secretFingerprint(of: secret, itemID: ItemID(high: 1, low: 2)) }
    }
}
