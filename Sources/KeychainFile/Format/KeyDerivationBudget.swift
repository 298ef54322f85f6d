@_spi(KeychainFileInternals) import KeychainCrypto

/// What the key derivations of one open may cost (SPEC §13, review L4): the format's per-header totals —
/// 20,000,000 PBKDF2 iterations and 2²⁶ KiB × passes of Argon2id — spent once across both header copies, so
/// that two copies with different slots cannot double the work; and the reader's own cap on the memory of one
/// Argon2id derivation, below the format's 4 GiB, so that a hostile slot cannot have the process killed for
/// want of memory.
///
/// A slot is charged before its KDF runs; one the budget refuses is not derived, and the refusal is the open's
/// error only if no slot opens.
///
/// ```swift
/// var budget = KeyDerivationBudget(memoryLimitKiB: KeyDerivationBudget.standardMemoryLimitKiB)
/// try budget.charge(slot, for: credential, slotOffset: 112)   // throws .limitReached when over
/// ```
struct KeyDerivationBudget: Sendable {
    /// The default cap on one Argon2id derivation's memory: 1 GiB.
    static let standardMemoryLimitKiB = 1 << 20

    /// The most memory one derivation may ask for, in KiB.
    let memoryLimitKiB: UInt64
    /// PBKDF2 iterations left for this open.
    private(set) var iterationsLeft: UInt64
    /// Argon2id KiB × passes left for this open.
    private(set) var argon2KiBLeft: UInt64

    /// - Parameters:
    ///   - memoryLimitKiB: The cap on one Argon2id derivation's memory, at most the format's 4 GiB.
    ///   - iterations: PBKDF2 iterations for the whole open; the format's per-header total by default.
    ///   - argon2KiB: Argon2id KiB × passes for the whole open; the format's per-header total by default.
    init(
        memoryLimitKiB: Int, iterations: UInt64 = Format.maximumTotalIterations,
        argon2KiB: UInt64 = UInt64(KDF.Argon2.maximumWorkKiB)
    ) {
        self.memoryLimitKiB = UInt64(max(0, min(memoryLimitKiB, KDF.Argon2.maximumMemoryKiB)))
        iterationsLeft = iterations
        argon2KiBLeft = argon2KiB
    }

    /// Takes the cost of deriving `slot`'s key for `credential` out of the budget; a slot of the other kind
    /// derives nothing and costs nothing.
    ///
    /// - Throws: `.limitReached`, naming the slot's offset, when its Argon2id memory is above the cap or its
    ///   work above what is left; the budget is then unchanged.
    mutating func charge(_ slot: HeaderKeySlot, for credential: Credential, slotOffset: Int) throws(KeychainError) {
        guard slot.derivesKey(for: credential) else { return }
        try charge(work: slot.work, memoryKiB: slot.argon2MemoryKiB, slotOffset: slotOffset)
    }

    /// Takes the cost of deriving a version 3 `slot`'s key for `credential`, as for a version 2 slot.
    ///
    /// - Throws: `.limitReached`, as for a version 2 slot; the budget is then unchanged.
    mutating func charge(_ slot: KeySlotV3, for credential: Credential, slotOffset: Int) throws(KeychainError) {
        guard credential.slotType == slot.type else { return }
        try charge(work: slot.kdf.work, memoryKiB: slot.kdf.argon2MemoryKiB, slotOffset: slotOffset)
    }

    private mutating func charge(
        work: (iterations: UInt64, argon2KiB: UInt64), memoryKiB: UInt64, slotOffset: Int
    ) throws(KeychainError) {
        guard memoryKiB <= memoryLimitKiB else {
            throw .limitReached(
                "the key slot at byte \(slotOffset) asks Argon2id for \(memoryKiB / 1024) MiB of memory; this reader allows at most \(memoryLimitKiB / 1024) MiB (OpenOptions.keyDerivationMemoryLimit)")
        }
        guard work.iterations <= iterationsLeft, work.argon2KiB <= argon2KiBLeft else {
            throw .limitReached(
                "the key slot at byte \(slotOffset) would take this open's key derivation, across both header copies, beyond what one header may ask for (20,000,000 PBKDF2 iterations, 2²⁶ KiB × passes of Argon2id): the copies hold different slots, and those tried first did not open with this credential")
        }
        iterationsLeft -= work.iterations
        argon2KiBLeft -= work.argon2KiB
    }
}
