/// The newest record of a keychain: the file's epoch, and the sequence number and chain value of its last
/// record — and, for a version 3 file, where each access group's chain stood (``groups``). An application can store
/// it somewhere an attacker cannot write and pass it to ``Keychain/open(at:credential:options:)`` later, which then
/// refuses a file rolled back to an older copy (SPEC.md §13, §15.4; SPEC.md §37.5).
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
    /// Version 3: every access group's chain as the last commit left it, in increasing key id; empty for versions 1
    /// and 2. A pin that names none is checked against a version 3 file as against version 2's, which cannot catch
    /// a holder of one group's credential rolling the others back.
    public let groups: [Group]

    /// - Parameters:
    ///   - epoch: The file's epoch.
    ///   - sequence: The last record's sequence number.
    ///   - chainValue: The chain value after it (16 bytes).
    ///   - groups: Version 3: each group's chain, in increasing key id; none for versions 1 and 2.
    public init(epoch: UInt64, sequence: UInt64, chainValue: [UInt8], groups: [Group] = []) {
        self.epoch = epoch
        self.sequence = sequence
        self.chainValue = chainValue
        self.groups = groups
    }

    /// Checks that this head is one a keychain could have written, before it is used as a pin: a 16-byte chain
    /// value, and groups of key ids 1 … 255 in increasing order, each with a 16-byte tag. ``init(_:)`` reads only
    /// such heads; the memberwise initialisers take any values, and a pin that cannot be a head is an error, never
    /// a refusal that blames the file (`rolledBack`) or a check that passes unsaid.
    ///
    /// - Throws: `KeychainError.invalidParameter` saying which part is wrong.
    func validateAsPin() throws(KeychainError) {
        guard chainValue.count == 16 else {
            throw .invalidParameter("the pinned head's chain value is \(chainValue.count) bytes; a head's chain value is 16 bytes")
        }
        var previous = 0
        for (position, group) in groups.enumerated() {
            guard group.keyID >= 1, Int(group.keyID) > previous else {
                throw .invalidParameter(
                    "group \(position + 1) of the pinned head has key id \(group.keyID); key ids are 1 … 255, each above the one before")
            }
            guard group.lastTag.count == 16 else {
                throw .invalidParameter(
                    "group \(position + 1) of the pinned head has a tag of \(group.lastTag.count) bytes; a group's tag is 16 bytes")
            }
            previous = Int(group.keyID)
        }
    }

    /// A text form, `epoch.sequence.chainvalue-hex`, followed for a version 3 head by
    /// `/keyid.startepoch.sequence.tag-hex` for each group, for storing a head; ``init(_:)`` reads it back.
    public var description: String {
        "\(epoch).\(sequence).\(HexText.lowercase(chainValue))"
            + groups.map { "/\($0.keyID).\($0.startEpoch).\($0.sequence).\(HexText.lowercase($0.lastTag))" }.joined()
    }

    /// Reads the text form written by ``description``: `epoch.sequence.chain`, two decimal numbers and the
    /// chain value as 32 hexadecimal digits (either case), then, for a version 3 head, `/keyid.start.sequence.tag`
    /// for each group (a key id 1 … 255, in increasing order, two decimal numbers and 32 hexadecimal digits).
    /// Spaces, tabs and newlines around it are ignored, as a head read back from a file ends in a newline;
    /// anything else that is not that form throws.
    ///
    /// A pin that cannot be read is an error, never "no pin": a file rolled back to an older copy must not
    /// open because its pin was unreadable.
    ///
    /// - Parameter text: The text form, such as `"3.42.000102030405060708090a0b0c0d0e0f\n"`.
    /// - Throws: `KeychainError.invalidParameter` saying what is wrong: empty text, not three parts separated
    ///   by dots, an epoch or sequence that is not a decimal number up to 18446744073709551615 (digits only,
    ///   no sign), a chain value that is not 32 hexadecimal digits, or a group that is not four parts, a key id
    ///   out of 1 … 255 or not above the one before, or a tag that is not 32 hexadecimal digits.
    ///
    /// For example:
    /// ```swift
    /// try (keychain.head.description + "\n").write(toFile: pinPath, atomically: true, encoding: .utf8)
    /// // … later, in another run:
    /// let pin = try Head(String(contentsOfFile: pinPath, encoding: .utf8))
    /// let keychain = try Keychain.open(at: path, credential: credential, options: .init(expectedHead: pin))
    /// ```
    public init(_ text: String) throws(KeychainError) {
        let whitespace: [UInt8] = [0x20, 0x09, 0x0A, 0x0D]
        var bytes = Array(text.utf8)[...]
        while let first = bytes.first, whitespace.contains(first) { bytes.removeFirst() }
        while let last = bytes.last, whitespace.contains(last) { bytes.removeLast() }
        guard !bytes.isEmpty else {
            throw .invalidParameter("the head text is empty; a head is written epoch.sequence.chain, as Head.description writes it")
        }
        let shown = Self.quoted(bytes)
        let sections = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        let parts = sections[0].split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw .invalidParameter("the head \(shown) has \(parts.count) part\(parts.count == 1 ? "" : "s"); a head has 3 parts separated by dots: epoch.sequence.chain")
        }
        let epoch = try Self.number(parts[0], named: "epoch", in: shown)
        let sequence = try Self.number(parts[1], named: "sequence", in: shown)
        let chainValue = try Self.tag(parts[2], named: "the chain value", in: shown)
        var groups: [Group] = []
        for (position, section) in sections.dropFirst().enumerated() {
            let name = "group \(position + 1)"
            let fields = section.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            guard fields.count == 4 else {
                throw .invalidParameter("\(name) of the head \(shown) has \(fields.count) part\(fields.count == 1 ? "" : "s"); a group has 4 parts separated by dots: keyid.startepoch.sequence.tag")
            }
            let keyID = try Self.number(fields[0], named: "key id of \(name)", in: shown)
            guard (1...255).contains(keyID), keyID > groups.last.map({ UInt64($0.keyID) }) ?? 0 else {
                throw .invalidParameter("the key id of \(name) of the head \(shown) is \(keyID); key ids are 1 … 255, each above the one before")
            }
            groups.append(Group(
                keyID: UInt8(keyID), startEpoch: try Self.number(fields[1], named: "start epoch of \(name)", in: shown),
                sequence: try Self.number(fields[2], named: "sequence of \(name)", in: shown),
                lastTag: try Self.tag(fields[3], named: "the tag of \(name)", in: shown)))
        }
        self.init(epoch: epoch, sequence: sequence, chainValue: chainValue, groups: groups)
    }

    /// 32 hexadecimal digits (either case) as 16 bytes.
    private static func tag(_ hex: ArraySlice<UInt8>, named name: String, in shown: String) throws(KeychainError) -> [UInt8] {
        if let bad = hex.firstIndex(where: { Self.hexValue($0) == nil }) {
            let character = String(decoding: hex[bad...], as: UTF8.self).first.map { String($0).debugDescription } ?? "?"
            throw .invalidParameter("\(name) of the head \(shown) has \(character), which is not a hexadecimal digit (0-9, a-f)")
        }
        guard hex.count == 32 else {
            throw .invalidParameter("\(name) of the head \(shown) has \(hex.count) digits, not the 32 hexadecimal digits (16 bytes) it must have")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        var index = hex.startIndex
        while index < hex.endIndex {
            // Both are hexadecimal digits, checked above; 16 × 15 + 15 fits in a byte.
            bytes.append(Self.hexValue(hex[index])! << 4 | Self.hexValue(hex[index + 1])!)
            index += 2
        }
        return bytes
    }

    /// A decimal number of ASCII digits only (no sign, no space) that fits in 64 bits.
    private static func number(_ digits: ArraySlice<UInt8>, named name: String, in shown: String) throws(KeychainError) -> UInt64 {
        let problem = "; it must be a decimal number from 0 to 18446744073709551615"
        guard !digits.isEmpty else { throw .invalidParameter("the \(name) of the head \(shown) is empty\(problem)") }
        var value: UInt64 = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else {
                throw .invalidParameter("the \(name) of the head \(shown) is \(quoted(digits))\(problem)")
            }
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            guard !overflow && !carry else { throw .invalidParameter("the \(name) of the head \(shown) is too large\(problem)") }
            value = sum
        }
        return value
    }

    /// The value of an ASCII hexadecimal digit, either case; `nil` for any other byte.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// `bytes` as quoted text for a message, escaped, and cut to 80 characters.
    private static func quoted(_ bytes: ArraySlice<UInt8>) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        return (text.count > 80 ? String(text.prefix(80)) + "…" : text).debugDescription
    }
}
