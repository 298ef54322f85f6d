// The libFuzzer entry point of the open-v3 fuzz target (built by Scripts/fuzz.sh --target open-v3, not by
// SwiftPM): opening and reading format version 3 keychain files — access groups as a cryptographic boundary,
// credentials scoped to some groups — through `Keychain`, with every credential the target knows.
//
// One input is one of two things, told apart by its first byte (``KeychainFuzzInput``):
// - 0x89, the first byte of the keychain magic: a whole version 3 file (``WholeFileMode``), opened as it is with
//   each credential of ``V3Credentials``. The script seeds these from the scripts in seeds/, through
//   FUZZ_WRITE_KEYCHAIN: files with several access groups, items in each, deletions, a compaction, credentials
//   scoped to some groups and full ones.
// - anything else: a script of operations (``ScriptMode``) that the harness performs through the library's own
//   writer on a new version 3 keychain — adds, updates and deletions in the groups, compactions, credentials
//   added, writes by a scoped holder — before checking the file it made as the whole-file mode does.
//
// A thrown `KeychainError` is the expected outcome for hostile bytes. A crash, a sanitizer report, a hang, a huge
// allocation, or a broken invariant (``Invariant/check(_:_:)``, which aborts) is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    KeychainFuzzInput.run(data, size, wholeFile: WholeFileMode.run, structured: ScriptMode.run)
    return 0
}
