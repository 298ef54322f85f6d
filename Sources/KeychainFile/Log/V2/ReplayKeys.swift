/// The keys a replay (``ReplayV2``) opens records with: a version 2 file's record keys, or a version 3 file's
/// log-side keys (its group keys are in the group chains the replay follows, ``ReplayV2/Outcome/groups``).
enum ReplayKeys: Sendable {
    case version2(RecordKeysV2)
    case version3(RecordKeysV3)
}
