/// Constants and limits of format version 1 (SPEC.md §4, §5, §7, §11).
enum Format {
    /// `\x89KCF\r\n\x1a\n`: the high byte and CR LF / SUB catch text-mode transfers and truncation.
    static let magic: [UInt8] = [0x89, 0x4B, 0x43, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]
    static let version: UInt16 = 1

    static let fixedHeaderSize = 76
    static let headerTrailerSize = 48  // checksum (16) + MAC (32)
    static let minimumHeaderSize = 236
    static let maximumHeaderSize = 1_980  // 76 + 16 × 116 + 48
    static let maximumSlots = 16

    static let minimumIterations: UInt32 = 1
    static let maximumIterations: UInt32 = 10_000_000
    static let maximumTotalIterations: UInt64 = 20_000_000

    static let frameHeaderSize = 8
    static let minimumBodyLength: UInt32 = 9
    static let maximumBodyLength: UInt32 = 268_435_456
    static let maximumTransactionEntries: UInt32 = 16_777_216
    static let maximumSecretSize = 1_048_576
    static let boxOverhead = 28
    /// A box is nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes).
    static let nonceSize = 12
    static let tagSize = 16
    static let deletionBoxSize = 44
    static let maximumBoxesPerEpoch: UInt64 = 1 << 31

    /// ASCII labels and domain-separation strings.
    static let aadPrefix = Array("KCF1".utf8)
    static let slotAADPrefix = Array("KCF1 key slot".utf8)
    static let rawKeySlotInfo = Array("KCF1 raw-key slot".utf8)
    static let headerKeyLabel = Array("KCF1 header".utf8)
    static let recordKeyLabel = Array("KCF1 records".utf8)
}
