@_spi(KeychainFileInternals) import KeychainCrypto

/// How a version 2 key slot turns its credential into a key-encryption key (Docs/FormatVersion2.md §4): the
/// slot's KDF id and its parameters, 12 bytes in the slot, within the format's bounds; what one open may spend
/// on them is ``KeyDerivationBudget``'s to say.
///
/// ```swift
/// let kdf = SlotKDF.argon2id(memoryKiB: 65_536, passes: 3, lanes: 4)   // id 3, 64 MiB
/// ```
enum SlotKDF: Sendable, Equatable {
    /// KDF id 1: PBKDF2-HMAC-SHA256 over the NFC password, 1 … 10,000,000 iterations.
    case pbkdf2(iterations: UInt32)
    /// KDF id 2: HKDF-SHA256 over a raw 32-byte key.
    case hkdf
    /// KDF id 3: Argon2id (RFC 9106) over the NFC password; memory in KiB, passes and lanes within
    /// ``KDF/Argon2``'s limits (memory ≤ 4 GiB, passes ≤ 2²⁰, lanes ≤ 16, memory × passes ≤ 2²⁶ KiB).
    case argon2id(memoryKiB: UInt32, passes: UInt32, lanes: UInt8)

    /// The parameters' length in a slot.
    static let parametersLength = 12

    /// The KDF id in the slot.
    var id: UInt8 {
        switch self {
        case .pbkdf2: return 1
        case .hkdf: return 2
        case .argon2id: return 3
        }
    }

    /// The 12 parameter bytes, big-endian, unused bytes zero.
    var parameterBytes: [UInt8] {
        var writer = ByteWriter(capacity: Self.parametersLength)
        switch self {
        case .pbkdf2(let iterations):
            writer.writeUInt32(iterations)
        case .hkdf:
            break
        case .argon2id(let memoryKiB, let passes, let lanes):
            writer.writeUInt32(memoryKiB)
            writer.writeUInt32(passes)
            writer.writeUInt8(lanes)
        }
        writer.writeBytes([UInt8](repeating: 0, count: Self.parametersLength - writer.bytes.count))
        return writer.bytes
    }

    /// What one derivation costs, for the header's total (SPEC §11's limits): PBKDF2 iterations, or Argon2's
    /// KiB × passes.
    var work: (iterations: UInt64, argon2KiB: UInt64) {
        switch self {
        case .pbkdf2(let iterations): return (UInt64(iterations), 0)
        case .hkdf: return (0, 0)
        case .argon2id(let memoryKiB, let passes, _): return (0, UInt64(memoryKiB) * UInt64(passes))
        }
    }

    /// The memory of one Argon2id derivation, in KiB; 0 for the other KDFs.
    var argon2MemoryKiB: UInt64 {
        guard case .argon2id(let memoryKiB, _, _) = self else { return 0 }
        return UInt64(memoryKiB)
    }

    /// Reads a KDF id and its 12 parameter bytes.
    ///
    /// - Throws: the reason, in words, when the id is unknown, a parameter is out of its bounds, or an unused
    ///   byte is not zero; the caller adds where.
    static func parse(id: UInt8, parameters: ArraySlice<UInt8>) throws(SlotKDFError) -> SlotKDF {
        guard parameters.count == parametersLength else { throw SlotKDFError("KDF parameters are not 12 bytes") }
        let bytes = Array(parameters)
        func u32(_ at: Int) -> UInt32 { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
        func zeros(from start: Int) -> Bool { bytes[start...].allSatisfy { $0 == 0 } }
        switch id {
        case 1:
            let iterations = u32(0)
            guard iterations >= Format.minimumIterations, iterations <= Format.maximumIterations else {
                throw SlotKDFError("PBKDF2 iteration count \(iterations) is outside 1 … 10,000,000")
            }
            guard zeros(from: 4) else { throw SlotKDFError("unused PBKDF2 parameter bytes are not zero") }
            return .pbkdf2(iterations: iterations)
        case 2:
            guard zeros(from: 0) else { throw SlotKDFError("HKDF has no parameters, but its bytes are not zero") }
            return .hkdf
        case 3:
            let memoryKiB = u32(0), passes = u32(4), lanes = bytes[8]
            guard (1...UInt8(KDF.Argon2.maximumParallelism)).contains(lanes) else {
                throw SlotKDFError("Argon2id lanes \(lanes) are outside 1 … \(KDF.Argon2.maximumParallelism)")
            }
            guard UInt64(memoryKiB) >= 8 * UInt64(lanes), UInt64(memoryKiB) <= UInt64(KDF.Argon2.maximumMemoryKiB) else {
                throw SlotKDFError("Argon2id memory \(memoryKiB) KiB is outside \(8 * Int(lanes)) … \(KDF.Argon2.maximumMemoryKiB)")
            }
            guard passes >= 1, UInt64(passes) <= UInt64(KDF.Argon2.maximumIterations) else {
                throw SlotKDFError("Argon2id passes \(passes) are outside 1 … \(KDF.Argon2.maximumIterations)")
            }
            guard UInt64(memoryKiB) * UInt64(passes) <= UInt64(KDF.Argon2.maximumWorkKiB) else {
                throw SlotKDFError("Argon2id memory × passes is more than \(KDF.Argon2.maximumWorkKiB) KiB")
            }
            guard zeros(from: 9) else { throw SlotKDFError("unused Argon2id parameter bytes are not zero") }
            return .argon2id(memoryKiB: memoryKiB, passes: passes, lanes: lanes)
        default:
            throw SlotKDFError("unknown KDF id \(id)")
        }
    }

    /// Derives the 32-byte key-encryption key from the credential's bytes: the NFC UTF-8 of a password, or
    /// a raw key's bytes (HKDF, with `info`).
    ///
    /// - Throws: `.limitReached` when Argon2id cannot have the memory it asks for.
    func deriveKey(from secret: [UInt8], salt: [UInt8], info: [UInt8]) throws(KeychainError) -> SymmetricKey {
        KeyDerivationCounter.noteDerivation()
        do {
            switch self {
            case .pbkdf2(let iterations):
                return try KDF.Insecure.PBKDF2.deriveKey(
                    from: secret, salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: Int(iterations))
            case .hkdf:
                return try HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: SymmetricKey(data: secret), salt: salt, info: info, outputByteCount: 32)
            case .argon2id(let memoryKiB, let passes, let lanes):
                return try KDF.Argon2id.deriveKey(
                    from: secret, salt: salt, outputByteCount: 32, iterations: Int(passes), memoryKiB: Int(memoryKiB),
                    parallelism: Int(lanes))
            }
        } catch {
            // The parameters were checked when the slot was read or made: what is left to fail is Argon2's memory,
            // which says nothing of the caller's arguments.
            guard case .argon2id = self else { throw .invalidParameter("key derivation (KDF id \(id)): \(error)") }
            throw .limitReached("Argon2id could not have the \(argon2MemoryKiB / 1024) MiB of memory its key slot asks for")
        }
    }
}
