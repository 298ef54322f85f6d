extension Head {
    /// Where one access group's chain of pages stood at a version 3 head (SPEC.md §37.5): the key
    /// id the file gives the group, the epoch its chain began in, the group sequence of its last page and that
    /// page's tag (the group's start value when it had none).
    ///
    /// A pinned head names every group so that a holder of one group's credential — who can rewrite the file into a
    /// later epoch — cannot put back an older copy and roll the other groups back: a later epoch contains the pin
    /// only if each pinned group's chain began anew after it (which only a holder of that group's key can do) or
    /// still passes through the pinned page. Versions 1 and 2 have no groups; their heads name none.
    ///
    /// For example:
    /// ```swift
    /// for group in keychain.head.groups { print(group.keyID, group.sequence) }
    /// ```
    public struct Group: Sendable, Hashable {
        /// The group's key id in the file, 1 … 255.
        public let keyID: UInt8
        /// The epoch in which the group's chain began.
        public let startEpoch: UInt64
        /// The group sequence of its last page; 0 when it had none.
        public let sequence: UInt64
        /// The tag of its last page, or its start value at sequence 0 (16 bytes).
        public let lastTag: [UInt8]

        /// - Parameters:
        ///   - keyID: The group's key id, 1 … 255.
        ///   - startEpoch: The epoch its chain began in.
        ///   - sequence: Its last page's group sequence, 0 for none.
        ///   - lastTag: That page's tag, or the start value (16 bytes).
        public init(keyID: UInt8, startEpoch: UInt64, sequence: UInt64, lastTag: [UInt8]) {
            self.keyID = keyID
            self.startEpoch = startEpoch
            self.sequence = sequence
            self.lastTag = lastTag
        }

        init(_ head: GroupHeadV3) {
            self.init(keyID: head.keyID, startEpoch: head.startEpoch, sequence: head.groupSequence, lastTag: head.lastTag)
        }
    }
}
