import Foundation
@_spi(Fixtures) import KeychainFile
import KeychainCrypto
import KeychainTestSupport

/// Writes the conformance fixtures of `Fixtures/v1`, `Fixtures/v2` or `Fixtures/v3`: `NAME.kcf` and its manifest `NAME.json` (the format
/// of the manifest is in `Fixtures/README.md`). Every random value comes from a seeded generator and every
/// date from a set clock, so running it again writes byte-identical files.
public enum FixtureGenerator {
    /// The password of the password fixtures.
    static let password = "correct horse battery staple"
    /// The 32-byte application key of the raw-key fixtures.
    static let rawKey: [UInt8] = (0..<32).map { UInt8($0 &* 7 &+ 3) }

    /// Writes every fixture into `directory` (which must exist and hold no fixture files yet), using
    /// `certificates` (the directory of Fixtures/certificates) for the certificate and identity fixtures.
    public static func writeAll(into directory: String, certificates: String, formatVersion: Int = 1) throws {
        let writer = FixtureWriter(directory: directory, certificates: certificates, formatVersion: formatVersion)
        try writer.writeAll()
    }

    /// The names of all fixtures of `formatVersion`, in the order they are written.
    public static func names(formatVersion: Int = 1) -> [String] {
        FixtureWriter.catalogue(formatVersion: formatVersion).map(\.name)
    }
}
