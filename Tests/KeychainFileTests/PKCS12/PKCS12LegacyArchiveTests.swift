import Foundation
import Testing
@testable import KeychainFile

/// PKCS #12 files with the legacy ciphers (Triple-DES, RC2) and in BER, made by `openssl pkcs12 -export -legacy`,
/// Python `cryptography` and Fixtures/pkcs12/reencode_ber.py (Fixtures/pkcs12/generate.py --legacy): what the
/// library decodes is compared with what `openssl pkcs12 -info -nodes -legacy` printed for the same file
/// (Fixtures/pkcs12/openssl-info/NAME.txt, committed).
@Suite("PKCS #12 archives: legacy ciphers and BER")
struct PKCS12LegacyArchiveTests {
    static let password = "pkcs12 fixture password"
    static let files = ["ec-openssl-legacy.p12", "ec-openssl-legacy-few-rounds.p12", "rsa-openssl-legacy-rc2-128.p12",
                        "ec-openssl-legacy-2des.p12", "ec-openssl-pbes2-3des.p12", "ec-openssl-legacy-nomac.p12",
                        "ec-ber-legacy.p12", "ec-ber-unencrypted.p12", "rsa-legacy-3des.p12"]

    /// What OpenSSL printed: each bag's attributes and PEM block, in order.
    struct OpenSSLBag {
        var friendlyName: String?
        var localKeyID: [UInt8]?
        var label = ""
        var der: [UInt8] = []
    }

    static func openSSLBags(_ name: String) throws -> [OpenSSLBag] {
        let text = String(decoding: try TestFixtures.bytes("pkcs12/openssl-info/" + name.replacingOccurrences(of: ".p12", with: ".txt")),
                          as: UTF8.self)
        var bags: [OpenSSLBag] = []
        var current = OpenSSLBag()
        var base64: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("friendlyName: ") {
                current.friendlyName = String(trimmed.dropFirst("friendlyName: ".count))
            } else if trimmed.hasPrefix("localKeyID: ") {
                current.localKeyID = try [UInt8](hexString: trimmed.dropFirst("localKeyID: ".count).replacingOccurrences(of: " ", with: ""))
            } else if trimmed.hasPrefix("-----BEGIN ") {
                current.label = String(trimmed.dropFirst("-----BEGIN ".count).dropLast(5))
                base64 = ""
            } else if trimmed.hasPrefix("-----END ") {
                current.der = Array(try #require(Data(base64Encoded: base64 ?? "")))
                bags.append(current)
                current = OpenSSLBag()
                base64 = nil
            } else if base64 != nil {
                base64! += trimmed
            }
        }
        return bags
    }

    @Test("the certificate, the decrypted PKCS #8 key, the friendly name and the localKeyId are what OpenSSL prints",
          arguments: files)
    func matchesOpenSSL(name: String) throws {
        let password = name == "ec-ber-unencrypted.p12" ? "" : Self.password
        let archive = try PKCS12Archive(bytes: try TestFixtures.bytes("pkcs12/" + name), password: password)
        let bags = try Self.openSSLBags(name)
        let certificates = bags.filter { $0.label == "CERTIFICATE" }
        let keys = bags.filter { $0.label == "PRIVATE KEY" }
        #expect(certificates.count == 1 && keys.count == 1)
        #expect(archive.certificates.count == certificates.count)
        #expect(archive.privateKeys.count == keys.count)
        for (decoded, printed) in zip(archive.certificates, certificates) {
            #expect(decoded.der == printed.der)
            #expect(decoded.friendlyName == printed.friendlyName)
            #expect(decoded.localKeyID == printed.localKeyID && printed.localKeyID != nil)
        }
        for (decoded, printed) in zip(archive.privateKeys, keys) {
            #expect(decoded.pkcs8 == printed.der)
            #expect(decoded.friendlyName == printed.friendlyName)
            #expect(decoded.localKeyID == printed.localKeyID)
        }
    }

    @Test("a wrong password is the MAC's error", arguments: files.filter { !$0.contains("nomac") && !$0.contains("unencrypted") })
    func wrongPassword(name: String) throws {
        let bytes = try TestFixtures.bytes("pkcs12/" + name)
        #expect(throws: PKCS12Error.wrongPassword) { try PKCS12Archive(bytes: bytes, password: "not the password") }
        #expect(throws: PKCS12Error.wrongPassword) { try PKCS12Archive(bytes: bytes, password: "") }
    }

    @Test("without a MAC, a wrong password is a 3DES key whose padding does not check, and nothing is returned")
    func wrongPasswordWithoutMAC() throws {
        // openssl -legacy -nomac leaves the certificate unencrypted and encrypts the key with 3DES.
        let bytes = try TestFixtures.bytes("pkcs12/ec-openssl-legacy-nomac.p12")
        #expect(throws: PKCS12Error.decryptionFailed("private key 1")) {
            try PKCS12Archive(bytes: bytes, password: "not the password")
        }
    }

    @Test("RC4 is still refused by name, after the MAC verified")
    func rc4Refused() throws {
        let bytes = try TestFixtures.bytes("pkcs12/ec-openssl-legacy-rc4.p12")
        do {
            _ = try PKCS12Archive(bytes: bytes, password: Self.password)
            Issue.record("read an RC4 file")
        } catch {
            guard case .unsupportedAlgorithm(let text) = error else { Issue.record("\(error)"); return }
            #expect(text.contains("pbeWithSHAAnd40BitRC4 (1.2.840.113549.1.12.1.2)"), "\(text)")
        }
        #expect(throws: PKCS12Error.wrongPassword) { try PKCS12Archive(bytes: bytes, password: "x") }
    }

    @Test("each BER file and the DER file it was re-encoded from read the same",
          arguments: [("ec-ber-legacy.p12", "ec-openssl-legacy-few-rounds.p12", password), ("ec-ber-unencrypted.p12", "ec-unencrypted.p12", "")])
    func berMatchesDER(berName: String, derName: String, password: String) throws {
        let ber = try TestFixtures.bytes("pkcs12/" + berName)
        let der = try TestFixtures.bytes("pkcs12/" + derName)
        #expect(ber != der && ber.contains(0x80))
        #expect(try PKCS12Archive(bytes: ber, password: password) == (try PKCS12Archive(bytes: der, password: password)))
    }

    @Test("every truncation and a bit flip in every byte of a legacy file, DER and BER, is a typed error, never an archive",
          arguments: ["ec-openssl-legacy-few-rounds.p12", "ec-ber-legacy.p12"])
    func truncationsAndFlips(name: String) throws {
        let bytes = try TestFixtures.bytes("pkcs12/" + name)
        _ = try PKCS12Archive(bytes: bytes, password: Self.password)
        for length in 0..<bytes.count {
            #expect(throws: PKCS12Error.self, "length \(length)") {
                try PKCS12Archive(bytes: Array(bytes[0..<length]), password: Self.password)
            }
        }
        var kinds: [String: Int] = [:]
        for index in bytes.indices {
            var flipped = bytes
            flipped[index] ^= 1 << UInt8(index % 8)
            do {
                _ = try PKCS12Archive(bytes: flipped, password: Self.password)
                Issue.record("flip at \(index) read")
            } catch {
                kinds[String(describing: error).prefix(16).description, default: 0] += 1
            }
        }
        #expect(kinds.values.reduce(0, +) == bytes.count)
        #expect(kinds.keys.contains { $0.hasPrefix("the MAC does not") })
        #expect(kinds.keys.contains { $0.hasPrefix("not a PKCS #12") })
    }

    @Test("flips of a legacy file without a MAC: a padding or structure error, or an archive that differs — never the original silently")
    func flipsWithoutMAC() throws {
        // Without a MAC nothing detects a flip inside a CBC block but the padding and the DER behind it; every
        // flip must give a typed error or an archive, never a crash, and flips in the last byte never an archive.
        let bytes = try TestFixtures.bytes("pkcs12/ec-openssl-legacy-nomac.p12")
        let original = try PKCS12Archive(bytes: bytes, password: Self.password)
        var decryptionFailures = 0
        for index in bytes.indices {
            var flipped = bytes
            flipped[index] ^= 0x40
            do {
                let archive = try PKCS12Archive(bytes: flipped, password: Self.password)
                #expect(archive != original, "flip at \(index) read as the original")
            } catch let error {
                if case .decryptionFailed = error { decryptionFailures += 1 }
            }
        }
        #expect(decryptionFailures > 0)
    }
}
