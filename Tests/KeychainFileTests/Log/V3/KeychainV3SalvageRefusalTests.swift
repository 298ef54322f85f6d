import Foundation
import Testing
@testable import KeychainFile

/// Salvage and rewriting repair are not built for format version 3 (SPEC.md §41): both refuse a
/// version 3 file as such, before anything is copied or read with another version's rules. (Before session 52 they
/// fell through to version 1's salvage, which answered "unsupported keychain format version 3".)
@Suite("Format version 3: salvage and rewriting repair refuse, saying why")
struct KeychainV3SalvageRefusalTests {
    @Test("Keychain.salvage and Keychain.repair refuse a version 3 file with unsupportedFeature; no copy, no new file, the file unchanged")
    func refused() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        _ = try V2Keychain.fill(keychain, count: 3)
        let bytes = try fileBytes(path)
        let salvaged = directory.file("salvaged.kcf"), backup = directory.file("backup.kcf")
        let salvageError = #expect(throws: KeychainError.unsupportedFeature(offset: 0, reason: "")) {
            _ = try Keychain.salvage(from: path, credential: TestKeychain.password, to: salvaged)
        }
        #expect(salvageError.map { "\($0)" }?.contains("version 3") == true)
        #expect(throws: KeychainError.unsupportedFeature(offset: 0, reason: "")) {
            _ = try Keychain.repair(at: path, credential: TestKeychain.password, keepingCopyAt: backup)
        }
        #expect(!FileManager.default.fileExists(atPath: salvaged))
        #expect(!FileManager.default.fileExists(atPath: backup))
        #expect(try fileBytes(path) == bytes)
    }
}
