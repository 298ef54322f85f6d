/// A pinned head against a version 3 file of a later epoch (SPEC.md §37.5).
///
/// In versions 1 and 2 only a holder of the master key writes a later epoch, so a later epoch contains every earlier
/// head (SPEC.md §15.4). In version 3 a holder of one group's credential rewrites the file into the next epoch too
/// (a scoped compaction, §38.7), copying the other groups' pages as they are: it could put back an older copy and
/// compact it past the pinned epoch. So a later epoch contains a pin only if each group the pin names is still in the
/// file and its chain either began after the pinned epoch — a new start value, which only a holder of the group's
/// key makes — or began in the epoch the pin says and passes through the pinned page: at least as many pages, and
/// the pinned page's tag where the pin saw it.
///
/// A reader that does not hold a group's key cannot tell a true new start from a false one, so for it a pin protects
/// the groups it holds; a full holder's pin protects every group.
///
/// ```swift
/// var replayKeys = keys
/// replayKeys.watchedPages = PinnedGroupsV3.pagesToWatch(pin, keys: keys)
/// // … replay with replayKeys …
/// try PinnedGroupsV3.checkContains(pin, keys: keys, outcome: replay.outcome)
/// ```
enum PinnedGroupsV3 {
    /// The pages whose tags the replay must remember: for each pinned group with a page whose chain in the file began
    /// in the epoch the pin says, its pinned group sequence. None when the file is not of a later epoch (then the
    /// record chain decides, §15.4) or the pin names no group.
    static func pagesToWatch(_ pin: Head, keys: RecordKeysV3) -> [UInt8: UInt64] {
        guard keys.epoch > pin.epoch else { return [:] }
        var pages: [UInt8: UInt64] = [:]
        for group in pin.groups where group.sequence > 0 && keys.startEpoch(of: group.keyID) == group.startEpoch {
            pages[group.keyID] = group.sequence
        }
        return pages
    }

    /// Checks that a file of a later epoch than `pin` contains its groups, after a replay with
    /// ``pagesToWatch(_:keys:)``. A pin that names no group is left to §15.4's rule alone, as version 2's.
    ///
    /// - Throws: `.rolledBack` when a pinned group is no longer named by the file's last commit (a group dropped, or
    ///   an older key table put back), or its chain began before the pinned epoch but not where the pin says, or
    ///   holds fewer pages than the pin, or another page where the pin saw its page.
    static func checkContains(_ pin: Head, keys: RecordKeysV3, outcome: ReplayV2.Outcome) throws(KeychainError) {
        guard keys.epoch > pin.epoch, !pin.groups.isEmpty else { return }
        let heads = outcome.heads ?? HeadsV3()
        for group in pin.groups {
            guard let head = heads[group.keyID] else { throw rolledBack(pin, outcome) }
            // Begun anew after the pinned epoch: a start value only the group's key makes (§35.4).
            if head.startEpoch > pin.epoch { continue }
            guard head.startEpoch == group.startEpoch, head.groupSequence >= group.sequence else { throw rolledBack(pin, outcome) }
            let tag: [UInt8]?
            if group.sequence == 0 {
                // The pin saw no page: the chain's start, the same start value while it has none.
                tag = head.groupSequence == 0 ? head.lastTag : group.lastTag
            } else {
                tag = outcome.groups[group.keyID]?.watchedTag ?? outcome.others[group.keyID]?.watchedTag
            }
            guard let tag, ChainTagV3.matches(tag, group.lastTag) else { throw rolledBack(pin, outcome) }
        }
    }

    private static func rolledBack(_ pin: Head, _ outcome: ReplayV2.Outcome) -> KeychainError {
        let head = outcome.head
        return .rolledBack(
            expected: pin,
            found: Head(epoch: head.epoch, sequence: head.sequence, chainValue: head.chainValue, groups: (outcome.heads?.groups ?? []).map(Head.Group.init)))
    }
}
