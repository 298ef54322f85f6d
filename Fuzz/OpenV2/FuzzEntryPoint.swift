// The libFuzzer entry point of the open-v2 fuzz target (built by Scripts/fuzz.sh --target open-v2, not by
// SwiftPM): opening, replaying and writing format version 2 keychain files through `Keychain`.
//
// One input is one of two things, told apart by its first byte (``KeychainFuzzInput``):
// - 0x89, the first byte of the keychain magic: a whole version 2 file (``WholeFileMode``), opened as it is
//   with ``FuzzCredentials``. The script seeds these from the structured seeds, through FUZZ_WRITE_KEYCHAIN:
//   files with a few items, compacted, with deletions and transaction parts.
// - anything else: a description of records (``StructuredMode``) that the harness seals under keys it knows
//   and commits through the file's commit slots, so that the fuzzer reaches what lies behind authentication:
//   page entries, attribute decoding, deletions and tombstones, transaction parts, uniqueness, a rewrite's
//   records under later appends, catching up, and damage after authentic records.
//
// Either is checked by the shared OpenedKeychainChecks (Fuzz/Shared/Keychain/) with what version 2 adds
// (``FormatV2Checks``). A thrown `KeychainError` is the expected outcome for hostile bytes. A crash, a sanitizer
// report, a hang, a huge allocation, or a broken invariant (``Invariant/check(_:_:)``, which aborts) is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    KeychainFuzzInput.run(data, size, wholeFile: WholeFileMode.run, structured: StructuredMode.run)
    return 0
}
