import Foundation
import KeychainTestSupport
import KeychainFile
import KeychainSecItem

/// A keychain file in a fresh temporary directory, removed when the value goes away.
final class TemporaryKeychain: @unchecked Sendable {
    // `@unchecked Sendable`: both properties are constants; Keychain is Sendable.
    let directory: String
    let keychain: Keychain

    static let credential = Credential.password("correct horse battery staple")

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kcf-secitem-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        keychain = try Keychain.create(
            at: directory + "/test.kcf", credential: Self.credential,
            options: .init(passwordIterations: .insecureForTesting(1_000)))
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// The same file opened a second time, as another process would.
    func reopened() throws -> Keychain {
        try Keychain.open(at: keychain.path, credential: Self.credential)
    }

    /// Runs `body` with the SecItem functions using this keychain.
    func run<Result>(accessGroups: [String]? = nil, _ body: () throws -> Result) rethrows -> Result {
        try SecItemKeychain(keychain, accessGroups: accessGroups).run(body)
    }
}

/// Files under the repository's `Fixtures/`, found from this source file's path.
enum SecItemFixtures {
    static let directory = RepositoryFiles.fixtures

    static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(relativePath))
    }

    /// The facts recorded beside a certificate fixture (written by the generator from the certificate it
    /// made, independently of KeychainFile's DER reader).
    struct CertificateFacts: Decodable {
        let version: Int
        let serial_content_octets: String
        let subject_der: String
        let issuer_der: String
        let subject_key_identifier: String?
        let public_key_hash: String
    }

    static func certificate(_ name: String) throws -> (der: Data, facts: CertificateFacts) {
        let der = try data("certificates/\(name).der")
        let facts = try JSONDecoder().decode(CertificateFacts.self, from: data("certificates/\(name).json"))
        return (der, facts)
    }
}

extension Data {
    /// Bytes from hexadecimal text (test data only; traps on bad input).
    /// Test data written in hexadecimal (a literal of the test: a malformed one traps).
    init(hex: String) {
        self.init(try! [UInt8](hexString: hex))
    }
}

/// Reads what a SecItem function returned through its result pointer.
enum Returned {
    static func dictionary(_ object: AnyObject?) -> [String: Any]? {
        object as? [String: Any]
    }

    static func dictionaries(_ object: AnyObject?) -> [[String: Any]]? {
        object as? [[String: Any]]
    }
}
