@_spi(KeychainFileInternals) import KeychainCrypto

/// Counts the derivations of a key slot's key-encryption key from a credential — PBKDF2, Argon2id, or HKDF of a
/// raw key, each the costly step of trying a credential on a slot — made on the current task while a counter is
/// bound (``counting(_:)``). It lets tests see how many times a call derived a credential's key (SPEC.md §16: a
/// keychain whose credential another process rotated away derives it once per header, not once per call).
/// Unbound, as everywhere but in those tests, it costs one task-local read per derivation.
///
/// ```swift
/// let counter = KeyDerivationCounter()
/// try counter.counting { try keychain.refresh() }
/// print(counter.count)   // the derivations the refresh made
/// ```
///
/// `@unchecked Sendable`: `value` is read and written only under `lock`.
final class KeyDerivationCounter: @unchecked Sendable {
    /// The counter the derivations on this task go to, if one is bound.
    @TaskLocal static var current: KeyDerivationCounter?

    private let lock = Lock()
    private var value = 0

    init() {}

    /// The derivations counted so far.
    var count: Int { lock.withLock { value } }

    /// Runs `body` with the derivations it makes on this task counted here.
    func counting<Result>(_ body: () throws -> Result) rethrows -> Result {
        try Self.$current.withValue(self) { try body() }
    }

    /// Counts one derivation on the counter bound to this task, if any: called where a slot's key is derived.
    static func noteDerivation() {
        guard let counter = current else { return }
        counter.lock.withLock { counter.value += 1 }
    }
}
