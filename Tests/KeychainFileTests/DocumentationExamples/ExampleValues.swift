import Foundation

/// The values the documentation's examples take as given ("`certificateDER` is a certificate's DER bytes,
/// `token` any `Codable` value").
enum ExampleValues {
    /// A `Codable` value to store.
    struct Token: Codable, Equatable, Sendable {
        var access: String
        var expires: Int
    }

    /// The DER of a real certificate (a fixture).
    static func certificateDER() throws -> [UInt8] {
        try TestFixtures.bytes("certificates/rsa2048-ca-v3-ski.der")
    }

    /// The 32 bytes a secret manager would hold.
    static let keyFromVault: [UInt8] = Array(0..<32)
}
