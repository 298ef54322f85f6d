@testable import KeychainFile

/// The inputs of the open targets, told apart by their first byte: the first byte of the keychain magic (0x89)
/// starts a whole keychain file, opened as it is; anything else describes records that the target seals under
/// keys it knows, so that the fuzzer reaches what lies behind authentication.
enum KeychainFuzzInput {
    static let wholeFileSelector: UInt8 = Format.magic[0]

    /// Runs libFuzzer's input `data` (`size` bytes) through `wholeFile` or `structured`.
    static func run(
        _ data: UnsafePointer<UInt8>?, _ size: Int, wholeFile: ([UInt8]) -> Void, structured: ([UInt8]) -> Void
    ) {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        if bytes.first == wholeFileSelector {
            wholeFile(bytes)
        } else {
            structured(bytes)
        }
    }
}
