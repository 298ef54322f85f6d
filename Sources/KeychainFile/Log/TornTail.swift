/// What was ignored at the end of a file when it was opened: the final record, incomplete or unverifiable
/// (SPEC.md §9.2).
///
/// A tail that is a known crash remnant (``mayHoldAcknowledgedData`` false) is overwritten by the next write.
/// One that may hold acknowledged data — a whole final record that does not verify, with nothing to show it
/// was never acknowledged (SPEC.md §16.1) — is never cut off by a write: writes and rewrites fail until it is
/// repaired (``Keychain/repair(at:credential:keepingCopyAt:)``) or salvaged, and a recovering open
/// (``Keychain/OpenOptions/recover``) reads every item of it that still authenticates.
public struct TornTail: Sendable, Equatable, CustomStringConvertible {
    /// The byte offset where the ignored data starts: the end of the last whole record.
    public let offset: Int
    /// How many bytes were ignored.
    public let byteCount: Int
    /// Why the final record was not used.
    public let reason: String
    /// Whether the ignored bytes may hold a record that was acknowledged as committed and later damaged.
    public let mayHoldAcknowledgedData: Bool

    init(offset: Int, byteCount: Int, reason: String, mayHoldAcknowledgedData: Bool = false) {
        self.offset = offset
        self.byteCount = byteCount
        self.reason = reason
        self.mayHoldAcknowledgedData = mayHoldAcknowledgedData
    }

    public var description: String {
        let what = mayHoldAcknowledgedData
            ? "; it is a whole record and may hold committed items: nothing is written over it until it is repaired or salvaged"
            : ""
        return "ignored \(byteCount) bytes at offset \(offset): \(reason)\(what)"
    }
}

/// The newest record of a keychain: the file's epoch, and the sequence number and chain value of its last
/// record. An application can store it somewhere an attacker cannot write and pass it to
/// ``Keychain/open(at:credential:options:)`` later, which then refuses a file rolled back to an older copy
/// (SPEC.md §13, §15.4).
///
/// For example:
/// ```swift
/// let pinned = keychain.head                       // after a write: save it elsewhere
/// // … later, in another run:
/// let keychain = try Keychain.open(at: path, credential: credential, options: .init(expectedHead: pinned))
/// ```
public struct Head: Sendable, Hashable, CustomStringConvertible {
    /// The file's epoch: 1 for a new file, plus one for each rewrite (compaction, credential change).
    public let epoch: UInt64
    /// The sequence number of the last record in this epoch; 0 for a file without records.
    public let sequence: UInt64
    /// The chain value after the last record (16 bytes).
    public let chainValue: [UInt8]

    /// - Parameters:
    ///   - epoch: The file's epoch.
    ///   - sequence: The last record's sequence number.
    ///   - chainValue: The chain value after it (16 bytes).
    public init(epoch: UInt64, sequence: UInt64, chainValue: [UInt8]) {
        self.epoch = epoch
        self.sequence = sequence
        self.chainValue = chainValue
    }

    /// A text form, `epoch.sequence.chainvalue-hex`, for storing a head; ``init(_:)-(String)`` reads it back.
    public var description: String {
        "\(epoch).\(sequence).\(chainValue.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())"
    }

    /// Reads the text form written by ``description``; `nil` if `text` is not one.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let epoch = UInt64(parts[0]), let sequence = UInt64(parts[1]), parts[2].count == 32,
              parts[2].allSatisfy(\.isHexDigit) else {
            return nil
        }
        var bytes: [UInt8] = []
        var hex = Substring(parts[2])
        while !hex.isEmpty {
            guard let byte = UInt8(hex.prefix(2), radix: 16) else { return nil }
            bytes.append(byte)
            hex = hex.dropFirst(2)
        }
        self.init(epoch: epoch, sequence: sequence, chainValue: bytes)
    }
}
