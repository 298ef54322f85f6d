// `Array.withUnsafeBytes` and friends are `rethrows`, which widens a typed error to `any Error`. These
// wrappers carry the typed error out through a `Result`, so code throwing `KeychainError` stays typed.

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` with a typed error.
    func withBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let outcome: Swift.Result<Result, Failure> = withUnsafeBytes { raw in
            Swift.Result { () throws(Failure) -> Result in try body(raw) }
        }
        return try outcome.get()
    }

    /// `withUnsafeMutableBytes` with a typed error.
    mutating func withMutableBytes<Result, Failure: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let outcome: Swift.Result<Result, Failure> = withUnsafeMutableBytes { raw in
            Swift.Result { () throws(Failure) -> Result in try body(raw) }
        }
        return try outcome.get()
    }
}
