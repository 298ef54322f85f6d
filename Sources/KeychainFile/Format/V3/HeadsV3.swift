@_spi(KeychainFileInternals) import KeychainCrypto

/// The heads a commit states (Docs/FormatVersion3.md §2.5): for every group of the file, where its chain ends — or,
/// at group sequence 0, that it has no page yet, with the group's start value as its tag — what lets a group's
/// holders catch a writer without the group key that dropped or replaced some of its pages, or the whole group.
///
/// Sealed as the commit's last segment (key id 0, no secret boxes), under the log side's heads key, with associated
/// data ``RecordAADV3/heads(fileID:epoch:sequence:)``. Its plaintext is the ``GroupHeadV3``s, 33 bytes each, in
/// strictly increasing key id; it may be empty.
///
/// ```swift
/// var heads = HeadsV3()
/// heads = heads.setting(GroupHeadV3(keyID: 2, startEpoch: 1, groupSequence: 4, lastTag: tag))
/// heads[2]?.groupSequence   // 4
/// ```
struct HeadsV3: Sendable, Equatable {
    /// In strictly increasing key id.
    private(set) var groups: [GroupHeadV3]

    init() { groups = [] }

    /// - Throws: `.invalidParameter` for heads not in strictly increasing key id 1 … 255, or a head with a tag other
    ///   than 16 bytes.
    init(_ groups: [GroupHeadV3]) throws(KeychainError) {
        for (index, head) in groups.enumerated() {
            guard head.keyID != 0, index == 0 || groups[index - 1].keyID < head.keyID else {
                throw .invalidParameter("heads are in strictly increasing key id, 1 … 255")
            }
            guard head.lastTag.count == 16 else { throw .invalidParameter("a head names a 16-byte tag") }
        }
        self.groups = groups
    }

    subscript(keyID: UInt8) -> GroupHeadV3? { groups.first { $0.keyID == keyID } }

    /// These heads with `head` in place of its group's (or added, in key id order).
    func setting(_ head: GroupHeadV3) -> HeadsV3 {
        var copy = self
        if let index = copy.groups.firstIndex(where: { $0.keyID >= head.keyID }) {
            if copy.groups[index].keyID == head.keyID { copy.groups[index] = head } else { copy.groups.insert(head, at: index) }
        } else {
            copy.groups.append(head)
        }
        return copy
    }

    /// These heads without group `keyID`'s: what a rewrite passes for the groups whose chains it starts anew.
    func removing(_ keyID: UInt8) -> HeadsV3 {
        var copy = self
        copy.groups.removeAll { $0.keyID == keyID }
        return copy
    }

    /// The plaintext: each head's 33 bytes, in order.
    var plaintext: [UInt8] {
        var writer = ByteWriter(capacity: groups.count * GroupHeadV3.byteCount)
        for head in groups {
            writer.writeUInt8(head.keyID)
            writer.writeUInt64(head.startEpoch)
            writer.writeUInt64(head.groupSequence)
            writer.writeBytes(head.lastTag)
        }
        return writer.bytes
    }

    /// The heads box of record `sequence`: nonce ‖ ciphertext ‖ tag.
    func seal<Generator: RandomNumberGenerator>(
        keys: RecordKeysV3, sequence: UInt64, using generator: inout Generator
    ) throws(KeychainError) -> [UInt8] {
        let aad = RecordAADV3.heads(fileID: keys.fileID, epoch: keys.epoch, sequence: sequence)
        do {
            let box = try AES.GCM.seal(plaintext, using: keys.headsKey, nonce: AES.GCM.Nonce(using: &generator), authenticating: aad)
            return box.combined ?? []
        } catch {
            throw .invalidParameter("AES-GCM could not seal the heads: \(error)")
        }
    }

    /// Opens and parses the heads box `bytes[box]` of record `sequence`.
    ///
    /// - Parameter base: the record's start in `bytes`; errors name offsets from it.
    /// - Throws: `.corrupted` at the box when it does not authenticate, or its heads are not 33 bytes each in strictly
    ///   increasing key id 1 … 255, with a group sequence ≥ 1 and a start epoch no later than the record's.
    static func open(_ bytes: [UInt8], box: Range<Int>, keys: RecordKeysV3, sequence: UInt64, base: Int) throws(KeychainError) -> HeadsV3 {
        func corrupted(_ reason: String) -> KeychainError { .corrupted(offset: box.lowerBound - base, reason: "record: the heads \(reason)") }
        let aad = RecordAADV3.heads(fileID: keys.fileID, epoch: keys.epoch, sequence: sequence)
        guard box.count >= RecordV3.boxOverhead, let sealed = try? AES.GCM.SealedBox(combined: bytes[box]),
              let plaintext = try? AES.GCM.open(sealed, using: keys.headsKey, authenticating: aad)
        else { throw corrupted("do not authenticate") }
        guard plaintext.count % GroupHeadV3.byteCount == 0 else { throw corrupted("are \(plaintext.count) bytes, not a multiple of 33") }
        var reader = ByteReader(plaintext)
        var groups: [GroupHeadV3] = []
        groups.reserveCapacity(plaintext.count / GroupHeadV3.byteCount)
        do {
            while !reader.isAtEnd {
                let keyID = try reader.readUInt8("key id")
                let startEpoch = try reader.readUInt64("start epoch")
                let groupSequence = try reader.readUInt64("group sequence")
                let tag = try reader.readBytes(16, "last page tag")
                guard keyID != 0, groups.last.map({ $0.keyID < keyID }) ?? true else {
                    throw corrupted("name key id \(keyID) out of order (strictly increasing, 1 … 255)")
                }
                guard startEpoch <= keys.epoch else { throw corrupted("start group \(keyID)'s chain in epoch \(startEpoch), after this one (\(keys.epoch))") }
                groups.append(GroupHeadV3(keyID: keyID, startEpoch: startEpoch, groupSequence: groupSequence, lastTag: tag))
            }
        } catch let error as KeychainError {
            throw error
        } catch {
            throw corrupted("are truncated")
        }
        var heads = HeadsV3()
        heads.groups = groups
        return heads
    }
}
