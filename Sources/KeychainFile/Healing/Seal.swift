import KeychainCrypto

/// What a format version 2 commit slot says about the log (Docs/FormatVersion2.md §3): how far it was written
/// and committed, and the head at the committed end, authenticated under the epoch's header key.
///
/// A seal is 128 bytes on disk: 64 bytes of fields, their HMAC-SHA256 (32), and RS(128, 96) parity over those
/// 96 (32), so that a copy with up to 16 damaged bytes still reads. Every integer is big-endian.
///
/// For example:
/// ```swift
/// let seal = Seal(epoch: 1, counter: 7, writtenEnd: 4_096, committedEnd: 4_096, headSequence: 12, headChain: chain)
/// let bytes = seal.encoded(headerKey: key)                 // 128 bytes
/// Seal.decode(bytes, headerKey: key) == seal               // true, also with 16 bytes damaged
/// ```
struct Seal: Equatable, Sendable {
    let epoch: UInt64
    /// Counts the commits of this epoch; the slot a seal goes in is `counter mod 2`.
    let counter: UInt64
    /// The logical end of everything written, committed or not.
    let writtenEnd: UInt64
    /// The logical end of the last committed record (`≤ writtenEnd`).
    let committedEnd: UInt64
    /// The sequence number and chain value of the record ending at `committedEnd`.
    let headSequence: UInt64
    let headChain: [UInt8]

    static let magic: [UInt8] = Array("KCFS".utf8)
    /// The fields' length: magic 4, epoch 8, counter 8, written end 8, committed end 8, head sequence 8, head
    /// chain 16, reserved 4.
    static let fieldsLength = 64
    /// Fields and MAC: the data the seal's parity protects.
    static let protectedLength = 96
    /// The seal on disk.
    static let encodedLength = 128

    /// The seal's bytes on disk, authenticated under `headerKey`.
    ///
    /// - Precondition: `headChain` is 16 bytes and `committedEnd ≤ writtenEnd`.
    func encoded(headerKey: SymmetricKey) -> [UInt8] {
        precondition(headChain.count == 16, "a chain value is 16 bytes")
        precondition(committedEnd <= writtenEnd, "nothing is committed past the written end")
        var writer = ByteWriter(capacity: Self.encodedLength)
        writer.writeBytes(Self.magic)
        writer.writeUInt64(epoch)
        writer.writeUInt64(counter)
        writer.writeUInt64(writtenEnd)
        writer.writeUInt64(committedEnd)
        writer.writeUInt64(headSequence)
        writer.writeBytes(headChain)
        writer.writeBytes([0, 0, 0, 0])
        writer.writeBytes(HMAC<SHA256>.authenticationCode(for: writer.bytes, using: headerKey))
        writer.writeBytes(Self.parity(of: writer.bytes))
        return writer.bytes
    }

    /// The seal in `bytes` (its 128 bytes on disk), repaired from its parity if need be: `nil` unless, after
    /// at most 16 damaged bytes are corrected, its magic, reserved bytes and MAC under `headerKey` are right.
    /// A seal never proposes its own repair: the MAC decides.
    static func decode(_ bytes: some Collection<UInt8>, headerKey: SymmetricKey) -> Seal? {
        guard bytes.count == encodedLength else { return nil }
        var codeword = Array(bytes)
        if let stored = Self.verified(codeword, headerKey: headerKey) { return stored }
        do {
            try code.correct(codeword: &codeword)
        } catch {
            return nil
        }
        return Self.verified(codeword, headerKey: headerKey)
    }

    /// The seal if `codeword`'s fields and MAC are right as they stand.
    private static func verified(_ codeword: [UInt8], headerKey: SymmetricKey) -> Seal? {
        guard Array(codeword[0..<4]) == magic, codeword[60..<64].allSatisfy({ $0 == 0 }),
              HMAC<SHA256>.isValidAuthenticationCode(
                codeword[fieldsLength..<protectedLength], authenticating: codeword[0..<fieldsLength], using: headerKey)
        else { return nil }
        var reader = ByteReader(codeword, range: 4..<60)
        guard let epoch = try? reader.readUInt64("epoch"), let counter = try? reader.readUInt64("counter"),
              let written = try? reader.readUInt64("written end"), let committed = try? reader.readUInt64("committed end"),
              let sequence = try? reader.readUInt64("head sequence"), let chain = try? reader.readBytes(16, "head chain"),
              committed <= written
        else { return nil }
        return Seal(epoch: epoch, counter: counter, writtenEnd: written, committedEnd: committed, headSequence: sequence, headChain: chain)
    }

    /// RS(128, 96): 32 parity symbols over the fields and the MAC.
    private static let code: ReedSolomonCode = {
        do { return try ReedSolomonCode(paritySymbols: encodedLength - protectedLength) } catch {
            preconditionFailure("32 parity symbols are supported: \(error)")
        }
    }()

    private static func parity(of protected: [UInt8]) -> [UInt8] {
        do { return try code.parity(of: protected) } catch { preconditionFailure("96 bytes fit RS(128, 96): \(error)") }
    }
}
