/// The GHASH state after associated data that equals `template` outside the varying bytes of `tables`, for the
/// messages of one key whose associated data has one layout (``AESGCMPublicFieldTables``).
///
/// `@unchecked Sendable`: every stored property is written in `init` and only read afterwards.
final class AESGCMAssociatedDataTemplate: @unchecked Sendable {
    let tables: AESGCMPublicFieldTables
    /// The template with its varying bytes zeroed, as the 8-byte words ``AESGCMPublicFieldTables/fixedMask`` masks.
    private let template: [UInt64]
    /// S(template with its varying bytes zeroed).
    private let state: GHASHStateStorage

    /// Prepares `template` (``AESGCMPublicFieldTables/byteCount`` bytes; its varying bytes are ignored).
    init(tables: AESGCMPublicFieldTables, template bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == tables.byteCount, "a template of the tables' length")
        self.tables = tables
        template = tables.wordOffsets.enumerated().map { index, offset in
            bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & tables.fixedMask[index]
        }
        let blockCount = (bytes.count + 15) / 16
        state = withUnsafeTemporaryAllocation(byteCount: 16 * blockCount, alignment: 16) { zeroed in
            zeroed.initializeMemory(as: UInt8.self, repeating: 0)
            for index in 0..<bytes.count where !tables.isVarying(index) { zeroed[index] = bytes[index] }
            return GHASHStateStorage(absorbing: UnsafeRawPointer(zeroed.baseAddress!), blockCount: blockCount, key: tables.context.ghashKey)
        }
    }

    /// The GHASH state after the whole of `aad` when it matches the template under `context`'s key; `nil` otherwise.
    @inline(__always)
    func state(after aad: UnsafeRawBufferPointer, under context: AESGCMContext) -> GHASH? {
        guard context === tables.context, aad.count == tables.byteCount, let base = aad.baseAddress else { return nil }
        // The associated data is public: an ordinary comparison is fine here.
        let matches = template.withUnsafeBufferPointer { template in
            tables.fixedMask.withUnsafeBufferPointer { mask in
                tables.wordOffsets.withUnsafeBufferPointer { offsets in
                    var difference: UInt64 = 0
                    for index in 0..<offsets.count {
                        difference |= (base.loadUnaligned(fromByteOffset: offsets[index], as: UInt64.self) ^ template[index]) & mask[index]
                    }
                    return difference == 0
                }
            }
        }
        guard matches else { return nil }
        var hash = state.value
        let varying = tables.contribution(of: base)
        hash.high ^= varying.high
        hash.low ^= varying.low
        return hash
    }
}
