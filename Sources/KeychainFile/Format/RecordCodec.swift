/// Sizes of record structures shared by the encoder and the decoder.
enum RecordCodec {
    /// The file bytes of one put entry (see ``SealedSecret/entryByteCount``).
    static func putEntryByteCount(_ kind: RecordKind, _ attributesBoxCount: Int, _ secretBoxCount: Int) -> Int {
        (kind == .transaction ? 1 : Format.frameHeaderSize + 9) + 4 + attributesBoxCount + 4 + secretBoxCount
    }
}
