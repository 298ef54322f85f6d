// The libFuzzer entry point of the open-and-replay fuzz target (built by Scripts/fuzz.sh, not by SwiftPM):
// opening and replaying format version 1 keychain files.
//
// One input is one of two things, told apart by its first byte (``KeychainFuzzInput``):
// - 0x89, the first byte of the keychain magic: a whole keychain file (``WholeFileMode``), opened as it is.
//   The seeds from Fixtures/v1 are of this kind.
// - anything else: a structured description of records (``StructuredMode``) that the harness seals under a
//   key it knows, so that the fuzzer reaches what lies behind authentication: attribute decoding,
//   transactions, deletions, uniqueness, torn tails after authentic records, certificate DER.
//
// Either is checked by the shared OpenedKeychainChecks (Fuzz/Shared/Keychain/) with what version 1 adds
// (``FormatV1Checks``). A thrown `KeychainError` is the expected outcome for hostile bytes. A crash, a sanitizer
// report, a hang, a huge allocation, or a broken invariant (``Invariant/check(_:_:)``, which aborts) is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    KeychainFuzzInput.run(data, size, wholeFile: WholeFileMode.run, structured: StructuredMode.run)
    return 0
}
