/// The keys a replay (``ReplayV2``) opens records with: a version 2 file's record keys, or a version 3 file's
/// log-side keys (its group keys are in the group chains the replay follows, ``ReplayV2/Outcome/groups``).
enum ReplayKeys: Sendable {
    case version2(RecordKeysV2)
    /// Version 3's record keys, and the name of each group followed by key id: a put in a group's page must name
    /// that group (Docs/FormatVersion3.md §2.11). A full holder follows every group, and a segment or head of
    /// another key id is `corrupted`; a scoped holder keeps other groups' segments as their bytes.
    case version3(RecordKeysV3, groupNames: [UInt8: String], followsEveryGroup: Bool)
}
