import KeychainCrypto

/// The KDF of a KDBX 4 file (AES-KDF, Argon2d or Argon2id), with its parameters bounded before any work: the
/// header is untrusted, and a crafted one must not make kcf allocate gigabytes or run for hours.
enum KDBXKeyDerivation {
    /// The most memory an Argon2 parameter set may ask for: 2 GiB (KeePassXC's default is 64 MiB).
    static let maximumArgon2MemoryBytes: UInt64 = 2 << 30
    /// The most Argon2 passes.
    static let maximumArgon2Iterations: UInt64 = 10_000
    /// The most Argon2 work, passes × memory, in KiB: 64 passes over 1 GiB.
    static let maximumArgon2WorkKiB: UInt64 = 1 << 26
    /// The most Argon2 lanes.
    static let maximumArgon2Lanes: UInt64 = 16
    /// The most AES-KDF rounds.
    static let maximumAESRounds: UInt64 = 100_000_000

    static let aesKDFUUID: [UInt8] = [0xC9, 0xD9, 0xF3, 0x9A, 0x62, 0x8A, 0x44, 0x60, 0xBF, 0x74, 0x0D, 0x08, 0xC1, 0x8A, 0x4F, 0xEA]
    static let argon2dUUID: [UInt8] = [0xEF, 0x63, 0x6D, 0xDF, 0x8C, 0x29, 0x44, 0x4B, 0x91, 0xF7, 0xA9, 0xA4, 0x03, 0xE3, 0x0A, 0x0C]
    static let argon2idUUID: [UInt8] = [0x9E, 0x29, 0x8B, 0x19, 0x56, 0xDB, 0x47, 0x73, 0xB2, 0x3D, 0xFC, 0x3E, 0xC6, 0xF0, 0xA1, 0xE6]

    /// The transformed key: the KDF of `parameters` applied to the 32-byte composite key.
    ///
    /// - Throws: ``KDBXError/limitExceeded(_:)`` for a parameter over a bound; ``KDBXError/unsupportedAlgorithm(_:)``
    ///   for another KDF or Argon2 version; ``KDBXError/damaged(_:)`` for a missing or malformed parameter.
    static func transformedKey(_ compositeKey: [UInt8], parameters: KDBXVariantDictionary) throws(KDBXError) -> [UInt8] {
        guard let uuid = parameters.bytes("$UUID") else { throw .damaged("the KDF parameters name no KDF ($UUID)") }
        guard let salt = parameters.bytes("S") else { throw .damaged("the KDF parameters have no salt or seed (S)") }
        switch uuid {
        case aesKDFUUID:
            guard let rounds = parameters.unsigned("R") else { throw .damaged("the AES-KDF parameters have no rounds (R)") }
            guard rounds <= maximumAESRounds else { throw .limitExceeded("AES-KDF with \(rounds) rounds (kcf runs at most \(maximumAESRounds))") }
            guard salt.count == 32 else { throw .damaged("the AES-KDF seed is \(salt.count) bytes, not 32") }
            do throws(CryptoKitError) {
                return try KDF.KeePassAES.transform(compositeKey, seed: salt, rounds: rounds)
            } catch {
                throw .damaged("AES-KDF: \(error)")
            }
        case argon2dUUID, argon2idUUID:
            return try argon2(compositeKey, salt: salt, parameters: parameters, identified: uuid == argon2idUUID)
        default:
            throw .unsupportedAlgorithm("the key derivation function \(KDBXHeader.uuidString(uuid))")
        }
    }

    private static func argon2(_ password: [UInt8], salt: [UInt8], parameters: KDBXVariantDictionary, identified: Bool) throws(KDBXError) -> [UInt8] {
        let name = identified ? "Argon2id" : "Argon2d"
        guard let version = parameters.unsigned("V"), let memory = parameters.unsigned("M"), let iterations = parameters.unsigned("I"),
              let lanes = parameters.unsigned("P") else {
            throw .damaged("the \(name) parameters lack one of V, M, I and P")
        }
        guard version == 0x13 else { throw .unsupportedAlgorithm("\(name) version \(version) (kcf reads version 19, 0x13)") }
        guard memory <= maximumArgon2MemoryBytes else {
            throw .limitExceeded("\(name) with \(memory >> 20) MiB of memory (kcf allows \(maximumArgon2MemoryBytes >> 20) MiB)")
        }
        guard iterations >= 1, iterations <= maximumArgon2Iterations else {
            throw .limitExceeded("\(name) with \(iterations) iterations (kcf allows 1 to \(maximumArgon2Iterations))")
        }
        guard lanes >= 1, lanes <= maximumArgon2Lanes else {
            throw .limitExceeded("\(name) with \(lanes) lanes (kcf allows 1 to \(maximumArgon2Lanes))")
        }
        let memoryKiB = memory / 1024
        guard memoryKiB * iterations <= maximumArgon2WorkKiB else {
            throw .limitExceeded("\(name) with \(iterations) passes over \(memory >> 20) MiB (kcf allows \(maximumArgon2WorkKiB >> 10) MiB of passes in all)")
        }
        guard memory % 1024 == 0, memoryKiB >= 8 * lanes else {
            throw .damaged("the \(name) memory (\(memory) bytes) is not a whole number of KiB of at least 8 KiB per lane")
        }
        guard salt.count >= 8 else { throw .damaged("the \(name) salt is \(salt.count) bytes, fewer than 8") }
        let secret = SymmetricKey(data: parameters.bytes("K") ?? [])
        let associated = parameters.bytes("A") ?? []
        do throws(CryptoKitError) {
            let key: SymmetricKey
            if identified {
                key = try KDF.Argon2id.deriveKey(from: password, salt: salt, secret: secret, associatedData: associated, outputByteCount: 32,
                                                 iterations: Int(iterations), memoryKiB: Int(memoryKiB), parallelism: Int(lanes))
            } else {
                key = try KDF.Insecure.Argon2d.deriveKey(from: password, salt: salt, secret: secret, associatedData: associated, outputByteCount: 32,
                                                iterations: Int(iterations), memoryKiB: Int(memoryKiB), parallelism: Int(lanes))
            }
            return key.withUnsafeBytes { Array($0) }
        } catch {
            throw .limitExceeded("\(name) with \(memory >> 20) MiB, \(iterations) iterations and \(lanes) lanes failed (\(error))")
        }
    }
}
