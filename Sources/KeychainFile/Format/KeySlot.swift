@_spi(KeychainFileInternals) import KeychainCrypto

/// A key slot (SPEC.md §5): the master key wrapped under a key derived from one credential.
struct KeySlot: Sendable, Equatable {
    enum SlotType: UInt8, Sendable {
        case password = 1
        case rawKey = 2
    }

    let type: SlotType
    let slotID: [UInt8]
    /// PBKDF2 iterations of a password slot; 0 for a raw-key slot.
    let iterations: UInt32
    let salt: [UInt8]
    let nonce: [UInt8]
    let wrappedKey: [UInt8]
    let tag: [UInt8]

    /// Bytes in the encoded slot: 116 for a password slot, 112 for a raw-key slot.
    var length: Int { type == .password ? 116 : 112 }

    /// slot[0 ..< S−60]: everything before the nonce, authenticated with the wrapped key.
    var parameterBytes: [UInt8] {
        var writer = ByteWriter(capacity: 56)
        writer.writeUInt8(type.rawValue)
        writer.writeUInt8(0)
        writer.writeUInt16(UInt16(length))
        writer.writeBytes(slotID)
        if type == .password { writer.writeUInt32(iterations) }
        writer.writeBytes(salt)
        return writer.bytes
    }

    func encode(into writer: inout ByteWriter) {
        writer.writeBytes(parameterBytes)
        writer.writeBytes(nonce)
        writer.writeBytes(wrappedKey)
        writer.writeBytes(tag)
    }

    /// Reads one slot. `fileOffset` is the position of `reader`'s bytes in the file, for error offsets.
    static func parse(_ reader: inout ByteReader, fileOffset: Int) throws(KeychainError) -> KeySlot {
        let start = reader.offset
        func corrupted(_ reason: String) -> KeychainError { .corrupted(offset: fileOffset + start, reason: "key slot: \(reason)") }
        do {
            let rawType = try reader.readUInt8("slot type")
            guard let type = SlotType(rawValue: rawType) else { throw corrupted("unknown slot type \(rawType)") }
            guard try reader.readUInt8("reserved") == 0 else { throw corrupted("reserved byte is not zero") }
            let declaredLength = Int(try reader.readUInt16("slot length"))
            let expectedLength = type == .password ? 116 : 112
            guard declaredLength == expectedLength else {
                throw corrupted("length \(declaredLength), expected \(expectedLength) for this slot type")
            }
            let slotID = try reader.readBytes(16, "slot id")
            var iterations: UInt32 = 0
            if type == .password {
                iterations = try reader.readUInt32("iterations")
                guard iterations >= Format.minimumIterations, iterations <= Format.maximumIterations else {
                    throw corrupted("PBKDF2 iteration count \(iterations) is outside 1 … 10,000,000")
                }
            }
            let salt = try reader.readBytes(32, "salt")
            let nonce = try reader.readBytes(12, "nonce")
            let wrappedKey = try reader.readBytes(32, "wrapped key")
            let tag = try reader.readBytes(16, "tag")
            return KeySlot(type: type, slotID: slotID, iterations: iterations, salt: salt, nonce: nonce, wrappedKey: wrappedKey, tag: tag)
        } catch let error as KeychainError {
            throw error
        } catch let underflow as ByteReader.Underflow {
            throw KeychainError.corrupted(offset: fileOffset + underflow.offset, reason: "key slot: truncated \(underflow.field)")
        } catch {
            throw corrupted("\(error)")
        }
    }

    /// The key-encryption key for `credential` (SPEC.md §5).
    func keyEncryptionKey(for credential: Credential, fileID: [UInt8]) throws(KeychainError) -> SymmetricKey {
        switch (type, credential) {
        case (.password, .password(let password)):
            KeyDerivationCounter.noteDerivation()
            do {
                return try KDF.Insecure.PBKDF2.deriveKey(
                    from: Credential.normalizedPasswordBytes(password), salt: salt, using: .sha256,
                    outputByteCount: 32, unsafeUncheckedRounds: Int(iterations))
            } catch {
                throw .invalidParameter("PBKDF2: \(error)")
            }
        case (.rawKey, .key(let applicationKey)):
            KeyDerivationCounter.noteDerivation()
            do {
                return try HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: applicationKey, salt: salt, info: Format.rawKeySlotInfo + fileID, outputByteCount: 32)
            } catch {
                throw .invalidParameter("HKDF: \(error)")
            }
        default:
            throw .invalidParameter("credential does not fit this slot type")
        }
    }

    /// Unwraps the master key with `credential`; `nil` if the tag does not verify (wrong credential).
    func unwrap(with credential: Credential, fileID: [UInt8]) throws(KeychainError) -> SymmetricKey? {
        let kek = try keyEncryptionKey(for: credential, fileID: fileID)
        let aad = Format.slotAADPrefix + fileID + parameterBytes
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: wrappedKey, tag: tag)
            var master = try AES.GCM.open(box, using: kek, authenticating: aad)
            defer { master.withUnsafeMutableBytes { secureWipe($0) } }
            return SymmetricKey(data: master)
        } catch CryptoKitError.authenticationFailure {
            return nil
        } catch {
            throw .invalidParameter("key slot unwrap: \(error)")
        }
    }

    /// Wraps `masterKey` in a new slot for `credential`.
    static func make<Generator: RandomNumberGenerator>(
        for credential: Credential, masterKey: SymmetricKey, fileID: [UInt8], iterations: PasswordIterations,
        using generator: inout Generator
    ) throws(KeychainError) -> KeySlot {
        let type = credential.slotType
        let slotID = randomBytes(16, using: &generator)
        let salt = randomBytes(32, using: &generator)
        let nonce = AES.GCM.Nonce(using: &generator)
        let unsealed = KeySlot(
            type: type, slotID: slotID, iterations: type == .password ? iterations.count : 0, salt: salt,
            nonce: Array(nonce), wrappedKey: [], tag: [])
        let kek = try unsealed.keyEncryptionKey(for: credential, fileID: fileID)
        let aad = Format.slotAADPrefix + fileID + unsealed.parameterBytes
        do {
            var plaintext = masterKey.withUnsafeBytes { Array($0) }
            defer { plaintext.withUnsafeMutableBytes { secureWipe($0) } }
            let box = try AES.GCM.seal(plaintext, using: kek, nonce: nonce, authenticating: aad)
            return KeySlot(
                type: type, slotID: slotID, iterations: unsealed.iterations, salt: salt, nonce: Array(nonce),
                wrappedKey: box.ciphertext, tag: box.tag)
        } catch {
            throw .invalidParameter("key slot wrap: \(error)")
        }
    }
}

/// `count` bytes from `generator`.
func randomBytes<Generator: RandomNumberGenerator>(_ count: Int, using generator: inout Generator) -> [UInt8] {
    var bytes = [UInt8]()
    bytes.reserveCapacity(count + 8)
    while bytes.count < count {
        withUnsafeBytes(of: generator.next().littleEndian) { bytes.append(contentsOf: $0) }
    }
    return Array(bytes.prefix(count))
}

/// Overwrites a buffer of secret bytes before it is released (best effort: Swift may have copied it).
func secureWipe(_ buffer: UnsafeMutableRawBufferPointer) {
    secureZeroMemory(buffer)
}
