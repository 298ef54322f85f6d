import Foundation

/// A failed consistency check: the keychain answered, but not with what was written.
struct CheckFailure: Error, CustomStringConvertible {
    let description: String
}
