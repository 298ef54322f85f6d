@testable import KeychainFile

/// Mode (a): the input is a whole version 2 file, opened as it is with ``FuzzCredentials``' raw key (every check)
/// and password (reads only).
///
/// The password is tried only when a header page holds a header whose checksum verifies and whose password
/// slots ask for at most ``passwordIterationBudget`` PBKDF2 iterations and no Argon2id: the fuzzer cannot
/// forge a checksum, so only the seeds' own one-iteration slots ever open, and a header it damaged must not
/// make one execution derive a key for seconds. The raw key needs no such work (HKDF).
enum WholeFileMode {
    static let passwordIterationBudget: UInt64 = 2_000

    static func run(_ bytes: [UInt8]) {
        OpenedKeychainChecks<FormatV2Checks>.run(bytes, credential: FuzzCredentials.key, depth: .full)
        if cheapToTryPassword(bytes) {
            OpenedKeychainChecks<FormatV2Checks>.run(bytes, credential: FuzzCredentials.password, depth: .read)
        }
    }

    /// Whether a header page holds a header that parses, with password slots that ask for little work.
    static func cheapToTryPassword(_ bytes: [UInt8]) -> Bool {
        for offset in [0, HealingLayout.headerBOffset] where bytes.count >= offset + 16 {
            let page = Array(bytes[offset..<min(bytes.count, offset + HealingLayout.headerPageLength)])
            guard let length = FileHeaderV2.declaredLength(page), length <= page.count,
                  let header = try? FileHeaderV2.parse(Array(page[0..<length]), fileOffset: offset)
            else { continue }
            let work = header.slots.reduce((iterations: UInt64(0), argon2KiB: UInt64(0))) {
                ($0.iterations + $1.work.iterations, $0.argon2KiB + $1.work.argon2KiB)
            }
            return work.iterations <= passwordIterationBudget && work.argon2KiB == 0
        }
        return false
    }
}
