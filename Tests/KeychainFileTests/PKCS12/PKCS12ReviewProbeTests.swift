import Foundation
import Testing
@testable import KeychainFile

/// Review probes (helper-28) for reading legacy PKCS #12 files.
@Suite("PKCS #12: review probes")
struct PKCS12ReviewProbeTests {
    @Test("without a MAC, every wrong password is decryptionFailed — also the one in about 256 whose 3DES padding happens to check")
    func everyWrongPasswordIsDecryptionFailed() throws {
        // openssl -legacy -nomac: the key alone is encrypted (3DES); a wrong key gives valid PKCS #7 padding
        // (a last byte of 1) about once in 256 tries, and then garbage for a PrivateKeyInfo.
        let bytes = try TestFixtures.bytes("pkcs12/ec-openssl-legacy-nomac.p12")
        var otherErrors: [String: PKCS12Error] = [:]
        for attempt in 0..<2_000 {
            let password = "wrong \(attempt)"
            do {
                _ = try PKCS12Archive(bytes: bytes, password: password)
                Issue.record("a wrong password read the file: \(password)")
            } catch {
                if error != .decryptionFailed("private key 1") { otherErrors[password] = error }
            }
        }
        let first = otherErrors.keys.sorted().first.map { "\($0): \(otherErrors[$0]!)" } ?? ""
        #expect(otherErrors.isEmpty, "\(otherErrors.count) of 2,000 wrong passwords gave another error, as \(first)")
    }
}
