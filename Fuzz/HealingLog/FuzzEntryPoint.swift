// The libFuzzer entry point of the healing-log fuzz target (built by Scripts/fuzz.sh --target healing-log, not
// by SwiftPM): format version 2's physical layer (Sources/KeychainFile/Healing/) opening hostile bytes.
//
// One input is one of two things, told apart by its first byte:
// - below 0x80: raw bytes (``RawFileMode``), opened as a file whose commit slots and log they are.
// - 0x80 and above: a description (``DamagedLogMode``) of records the harness appends under a key it knows —
//   so that the seals authenticate — and of damage done to the file afterwards: flipped and zeroed bytes,
//   a cut or longer file, unreadable sectors, slots copied or overwritten, a rewrite end.
//
// Either way the harness opens the log, reads all of it, repairs every chunk, reads it through a
// HealingFileHandle, and in the second mode writes back confirmed repairs, cuts, sets aside and appends.
// A thrown `KeychainError` is the expected outcome for hostile bytes; a crash, a sanitizer report, a hang,
// a huge allocation or a broken invariant (``Invariant/check(_:_:)``, which aborts) is a finding.
@testable import KeychainFile

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let first = bytes.first, first >= DamagedLogMode.selector {
        DamagedLogMode.run(Array(bytes.dropFirst()))
    } else {
        RawFileMode.run(bytes)
    }
    return 0
}
