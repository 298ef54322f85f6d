@testable import KeychainFile

/// Mode (a): the input is a whole version 3 file, opened as it is with every credential of ``V3Credentials``: the
/// full raw key with every check (reads, reopen, an append, a compaction), the others with the read paths, each
/// also with recovery and salvage (``RecoveryChecksV3``), then what a scoped credential promises (``ScopeChecks``).
///
/// A password is tried only when a header run holds a header whose checksum verifies and whose password slots ask
/// for at most ``passwordIterationBudget`` PBKDF2 iterations and no Argon2id: the fuzzer cannot forge a checksum, so
/// only the seeds' own one-iteration slots ever open, and a header it damaged must not make one execution derive a
/// key for seconds. A raw key needs no such work (HKDF).
enum WholeFileMode {
    static let passwordIterationBudget: UInt64 = 2_000

    static func run(_ bytes: [UInt8]) {
        let passwords = cheapToTryPasswords(bytes)
        for known in V3Credentials.all where passwords || !known.isPassword {
            trace("— \(known.name)")
            let depth: OpenedKeychainChecks<FormatV3Checks>.Depth = known.name == "full key" ? .full : .read
            OpenedKeychainChecks<FormatV3Checks>.run(bytes, credential: known.credential, depth: depth)
            RecoveryChecksV3.run(bytes, known: known)
        }
        ScopeChecks.run(bytes, passwords: passwords)
    }

    /// Whether a header run (run A at 0, or run B after a run A of any length) holds a header that parses, with
    /// password slots that ask for little work.
    static func cheapToTryPasswords(_ bytes: [UInt8]) -> Bool {
        let offsets = [0] + (1...HeaderRunV3.maximumPages).map { HeaderRunV3.runBOffset(pageCount: $0) }
        for offset in offsets where bytes.count >= offset + 16 {
            guard let length = FileHeaderV3.declaredLength(Array(bytes[offset..<(offset + 16)])), offset + length <= bytes.count,
                  let header = try? FileHeaderV3.parse(Array(bytes[offset..<(offset + length)]), fileOffset: offset)
            else { continue }
            let work = header.slots.reduce((iterations: UInt64(0), argon2KiB: UInt64(0))) {
                ($0.iterations + $1.kdf.work.iterations, $0.argon2KiB + $1.kdf.work.argon2KiB)
            }
            return work.iterations <= passwordIterationBudget && work.argon2KiB == 0
        }
        return false
    }
}
