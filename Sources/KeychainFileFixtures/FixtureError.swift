import Foundation
@_spi(Fixtures) import KeychainFile
import KeychainCrypto

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
