/// Where an item's sealed secret is and the associated data it was sealed with (SPEC.md §7.2–7.3), so that it
/// can be decrypted on demand. Only boxes that were verified when read from a file, or sealed by this process,
/// are made into sealed secrets: reading one decrypts it without checking its tag again (``decrypt(using:)``).
///
/// The box and the chain value before it sit in an ``ItemBytes`` object: one of their own (a secret just
/// sealed), or the one a live item keeps its attributes in too (see ``StoredItem``).
struct SealedSecret: Sendable, Equatable {
    /// nonce ‖ ciphertext ‖ tag. When ``hasChain``, the 16 bytes before it in its object are the chain value.
    let box: ByteView
    let sequence: UInt64
    let entryCount: UInt32
    let entryIndex: UInt32
    /// See ``entryByteCount``; an entry is at most a few MiB (SPEC.md §11), far below 2³².
    private let storedEntryByteCount: UInt32
    let kind: RecordKind
    /// Whether the secret has a chain value (a placeholder has none).
    let hasChain: Bool

    /// The bytes of the file the put that wrote this secret occupies: its two box fields, plus the entry kind
    /// byte in a transaction or the 17-byte frame header of a put record. Counted as live bytes while the
    /// item is live (``KeychainStatistics``).
    var entryByteCount: Int { Int(storedEntryByteCount) }

    /// A secret whose box and chain value are copied into an object of their own.
    init(
        box: [UInt8], sequence: UInt64, kind: RecordKind, entryCount: UInt32, entryIndex: UInt32, previousChain: [UInt8],
        entryByteCount: Int = 0
    ) {
        precondition(previousChain.isEmpty || previousChain.count == 16, "a chain value is a 16-byte tag")
        let object = box.withUnsafeBytes { box in
            previousChain.withUnsafeBytes { chain in ItemBytes.make(attributes: UnsafeRawBufferPointer(start: nil, count: 0), chain: chain, box: box) }
        }
        self.init(
            box: object.boxView, hasChain: !previousChain.isEmpty, sequence: sequence, kind: kind, entryCount: entryCount,
            entryIndex: entryIndex, entryByteCount: entryByteCount)
    }

    /// A secret whose box `box` views; when `hasChain`, the chain value is the 16 bytes before it.
    init(
        box: ByteView, hasChain: Bool, sequence: UInt64, kind: RecordKind, entryCount: UInt32, entryIndex: UInt32,
        entryByteCount: Int
    ) {
        precondition(!hasChain || box.offset >= 16, "the chain value precedes the box")
        self.box = box
        self.hasChain = hasChain
        self.sequence = sequence
        self.kind = kind
        self.entryCount = entryCount
        self.entryIndex = entryIndex
        storedEntryByteCount = UInt32(clamping: entryByteCount)
    }

    /// The tag of the item's attributes box, which precedes the secret box in the chain.
    var previousChain: [UInt8] {
        guard hasChain else { return [] }
        return box.storage.withBytes { Array($0[(box.offset - 16)..<box.offset]) }
    }

    /// The secret's size in bytes.
    var plaintextCount: Int { box.count - Format.boxOverhead }

    static func == (lhs: SealedSecret, rhs: SealedSecret) -> Bool {
        lhs.box == rhs.box && lhs.sequence == rhs.sequence && lhs.entryCount == rhs.entryCount && lhs.entryIndex == rhs.entryIndex
            && lhs.storedEntryByteCount == rhs.storedEntryByteCount && lhs.kind == rhs.kind && lhs.previousChain == rhs.previousChain
    }
}

