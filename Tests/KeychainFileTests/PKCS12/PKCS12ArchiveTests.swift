import Foundation
import Testing
import KeychainTestSupport
@testable import KeychainFile

/// PKCS #12 files: Python `cryptography`'s (Fixtures/pkcs12, made by generate.py there) read, its legacy 3DES
/// one too (PKCS12LegacyArchiveTests has the others), wrong passwords refused by the MAC, our own files read back, and every truncation and
/// bit flip of a fixture a typed error.
@Suite("PKCS #12 archives")
struct PKCS12ArchiveTests {
    struct Entry: Decodable {
        let password: String
        let friendly_name: String
        let certificate: String
        let pkcs8: String
    }

    static let manifest: [String: Entry] = (try? TestFixtures.json([String: Entry].self, "pkcs12/manifest.json")) ?? [:]
    static let readable = ["rsa-best-available.p12", "ec-pbes2-aes256-sha256.p12", "ec-few-rounds.p12", "ec-unencrypted.p12",
                           "ec-openssl-aes128-sha1mac.p12", "ec-openssl-nomac.p12", "rsa-legacy-3des.p12"]


    @Test("cryptography's files: the certificate and PKCS #8 key as written, the friendly name, paired by localKeyId",
          arguments: readable)
    func readsCryptographyFiles(name: String) throws {
        let entry = try #require(Self.manifest[name])
        let archive = try PKCS12Archive(bytes: try TestFixtures.bytes("pkcs12/" + name), password: entry.password)
        #expect(archive.certificates.count == 1)
        #expect(archive.privateKeys.count == 1)
        let certificate = try #require(archive.certificates.first)
        let key = try #require(archive.privateKeys.first)
        #expect(certificate.der == (try TestFixtures.bytes("certificates/" + entry.certificate)))
        #expect(key.pkcs8 == (try [UInt8](hexString: entry.pkcs8)))
        #expect(certificate.friendlyName == entry.friendly_name)
        #expect(key.friendlyName == entry.friendly_name)
        #expect(certificate.localKeyID != nil && certificate.localKeyID == key.localKeyID)
    }

    @Test("a wrong password is the MAC's error, for every fixture with a MAC",
          arguments: readable.filter { $0 != "ec-openssl-nomac.p12" })
    func wrongPassword(name: String) throws {
        let bytes = try TestFixtures.bytes("pkcs12/" + name)
        #expect(throws: PKCS12Error.wrongPassword) { try PKCS12Archive(bytes: bytes, password: "not the password") }
    }

    @Test("without a MAC (openssl -nomac), a wrong password is the encrypted key that does not decrypt")
    func wrongPasswordWithoutMAC() throws {
        let bytes = try TestFixtures.bytes("pkcs12/ec-openssl-nomac.p12")
        #expect(throws: PKCS12Error.decryptionFailed("private key 1")) { try PKCS12Archive(bytes: bytes, password: "not the password") }
    }

    @Test("written and read back: several certificates and keys, names beyond ASCII, any password")
    func roundTrip() throws {
        let certificate = try TestFixtures.bytes("certificates/rsa2048-v1.der")
        let other = try TestFixtures.bytes("certificates/ec-p256-leaf-v3-no-ski.der")
        let archive = PKCS12Archive(
            certificates: [PKCS12Certificate(der: certificate, friendlyName: "Zoë ✓ 𝄞", localKeyID: [1, 2, 3]),
                           PKCS12Certificate(der: other)],
            privateKeys: [PKCS12PrivateKey(pkcs8: try [UInt8](hexString: try #require(Self.manifest["ec-few-rounds.p12"]).pkcs8),
                                           friendlyName: "Zoë ✓ 𝄞", localKeyID: [1, 2, 3]),
                          PKCS12PrivateKey(pkcs8: try [UInt8](hexString: try #require(Self.manifest["rsa-best-available.p12"]).pkcs8))])
        for password in ["", "pässwörd", String(repeating: "x", count: 300)] {
            let file = try archive.encoded(password: password, iterations: 1_000)
            #expect(try PKCS12Archive(bytes: file, password: password) == archive)
            #expect(throws: PKCS12Error.wrongPassword) { try PKCS12Archive(bytes: file, password: password + "!") }
        }
        // Fresh salts and IVs every time.
        #expect(try archive.encoded(password: "a", iterations: 1) != (try archive.encoded(password: "a", iterations: 1)))
        #expect(throws: PKCS12Error.invalidParameter("an archive without certificates or keys")) {
            try PKCS12Archive().encoded(password: "a", iterations: 1)
        }
        #expect(throws: PKCS12Error.iterationCountOutOfRange(0)) { try archive.encoded(password: "a", iterations: 0) }
    }

    @Test("every truncation and a bit flip in every byte of a fixture is a typed error, never a crash or an archive")
    func truncationsAndFlips() throws {
        let bytes = try TestFixtures.bytes("pkcs12/ec-few-rounds.p12")
        let password = try #require(Self.manifest["ec-few-rounds.p12"]).password
        _ = try PKCS12Archive(bytes: bytes, password: password)
        for length in 0..<bytes.count {
            #expect(throws: PKCS12Error.self, "length \(length)") { try PKCS12Archive(bytes: Array(bytes[0..<length]), password: password) }
        }
        var kinds: [String: Int] = [:]
        for index in bytes.indices {
            var flipped = bytes
            flipped[index] ^= 1 << UInt8(index % 8)
            do {
                _ = try PKCS12Archive(bytes: flipped, password: password)
                Issue.record("flip at \(index) read")
            } catch {
                kinds[String(describing: error).prefix(20).description, default: 0] += 1
            }
        }
        #expect(kinds.values.reduce(0, +) == bytes.count)
        #expect(kinds.keys.contains { $0.hasPrefix("the MAC does not") })
        #expect(kinds.keys.contains { $0.hasPrefix("not a PKCS #12") })
    }

    @Test("flips inside the MAC-protected contents, MAC recomputed: the bag parser returns an archive or a typed error")
    func flipsBehindTheMAC() throws {
        // The unencrypted fixture's AuthenticatedSafe holds plain bags, so its parser sees every flipped byte.
        let original = try PKCS12Archive(bytes: try TestFixtures.bytes("pkcs12/ec-unencrypted.p12"), password: "")
        let file = try PKCS12Archive(certificates: original.certificates, privateKeys: original.privateKeys)
            .encoded(password: "p", iterations: 1)
        // Rebuild an unencrypted file: AuthenticatedSafe of plain data ContentInfos, re-MACed after each flip.
        let certificate = try #require(original.certificates.first)
        let key = try #require(original.privateKeys.first)
        let certificateBag = DERWriter.sequence(
            DERWriter.objectIdentifier(PKCS12ObjectIdentifier.certBag),
            DERWriter.element(0xa0, DERWriter.sequence(DERWriter.objectIdentifier(PKCS12ObjectIdentifier.x509Certificate),
                                                       DERWriter.element(0xa0, DERWriter.octetString(certificate.der)))),
            DERWriter.set(of: [DERWriter.sequence(DERWriter.objectIdentifier(PKCS12ObjectIdentifier.friendlyName),
                                                  DERWriter.set(of: [DERWriter.bmpString("name")]))]))
        let keyBag = DERWriter.sequence(DERWriter.objectIdentifier(PKCS12ObjectIdentifier.keyBag),
                                        DERWriter.element(0xa0, key.pkcs8))
        let safe = DERWriter.sequence(
            DERWriter.sequence(DERWriter.objectIdentifier(PKCS12ObjectIdentifier.data),
                               DERWriter.element(0xa0, DERWriter.octetString(DERWriter.sequence(certificateBag, keyBag)))))
        func wrap(_ authenticatedSafe: [UInt8]) throws -> [UInt8] {
            let mac = try PKCS12MAC(authenticating: authenticatedSafe, password: "p", salt: [1, 2, 3], iterations: 1)
            return DERWriter.sequence(DERWriter.integer(3),
                                      DERWriter.sequence(DERWriter.objectIdentifier(PKCS12ObjectIdentifier.data),
                                                         DERWriter.element(0xa0, DERWriter.octetString(authenticatedSafe))),
                                      mac.encoded)
        }
        let plain = try PKCS12Archive(bytes: try wrap(safe), password: "p")
        #expect(plain.certificates.map(\.der) == original.certificates.map(\.der))
        #expect(plain.privateKeys.map(\.pkcs8) == original.privateKeys.map(\.pkcs8))
        #expect(file.count > 0)
        var refused = 0
        var read = 0
        for index in safe.indices {
            for bit in [0, 7] {
                var flipped = safe
                flipped[index] ^= 1 << UInt8(bit)
                do {
                    _ = try PKCS12Archive(bytes: try wrap(flipped), password: "p")
                    read += 1
                } catch let error as PKCS12Error {
                    #expect(error != .wrongPassword)
                    refused += 1
                }
            }
        }
        // Flips in certificate and key bytes still read (this layer does not parse them); flips in the structure do not.
        #expect(refused > 0 && read > 0 && refused + read == 2 * safe.count)
    }
}
