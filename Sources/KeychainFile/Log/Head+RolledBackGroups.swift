extension Head {
    /// For a `rolledBack` message: each group a pinned version 3 head names whose chain this later head does not
    /// visibly pass through (SPEC.md §37.5), in words, joined by "; "; `nil` when the heads alone show none — the
    /// record chain refused (§15.4), or a group's page at the pinned place differs, which only the file shows. Heads
    /// of one epoch are left to the record chain.
    func rolledBackGroups(from pin: Head) -> String? {
        guard epoch > pin.epoch else { return nil }
        let differences = pin.groups.compactMap { (pinned) -> String? in
            guard let here = groups.first(where: { $0.keyID == pinned.keyID }) else {
                return "the access group with key id \(pinned.keyID), which the pinned head names, is not in the file (a group dropped, or an older key table put back)"
            }
            // Begun anew after the pinned epoch: a start value only the group's key makes.
            if here.startEpoch > pin.epoch { return nil }
            if here.startEpoch != pinned.startEpoch {
                return "the chain of the access group with key id \(pinned.keyID) began in epoch \(here.startEpoch) in the file, in epoch \(pinned.startEpoch) at the pinned head"
            }
            if here.sequence < pinned.sequence {
                return "the access group with key id \(pinned.keyID) holds \(here.sequence) \(here.sequence == 1 ? "page" : "pages") in the file, \(pinned.sequence) at the pinned head (its last pages dropped, or an older copy put back)"
            }
            if here.sequence == pinned.sequence, !ChainTagV3.matches(here.lastTag, pinned.lastTag) {
                return "the access group with key id \(pinned.keyID) has another page \(pinned.sequence) in the file than at the pinned head (a fork)"
            }
            return nil
        }
        return differences.isEmpty ? nil : differences.joined(separator: "; ")
    }
}
