import Foundation
import KeychainFile

/// Lets `SecItemValueReader` look inside an `Optional` stored in an `Any`.
protocol OptionalBox {
    /// The wrapped value, or `nil`.
    var boxedValue: Any? { get }
}
