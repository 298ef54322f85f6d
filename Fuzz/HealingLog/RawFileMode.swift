@testable import KeychainCrypto
@testable import KeychainFile

/// Mode (a): the input is the file from commit slot 0 on (header page A, which the log does not read, is
/// zeros): slots, header page B and log as the fuzzer wrote them. Without the key it cannot forge a seal, so
/// this mode covers seal and slot decoding of garbage, opens without a slot, and what a reader does then.
enum RawFileMode {
    static func run(_ input: [UInt8]) {
        let image = [UInt8](repeating: 0, count: HealingLayout.slotOffsets[0]) + input
        HealingExercise.readEverything(FaultyFileHandle(bytes: image), rewriteEnd: 0)
    }
}
