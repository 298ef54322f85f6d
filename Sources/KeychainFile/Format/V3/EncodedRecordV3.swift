/// A version 3 record as ``RecordV3Encoder`` wrote it: its bytes, its chain tag (the next record's previous chain
/// tag), and the groups' heads after it — what the commit wrote, or, after a transaction part, what the next record
/// of the transaction starts from.
struct EncodedRecordV3: Sendable {
    let bytes: [UInt8]
    let chainTag: [UInt8]
    let heads: HeadsV3
}
