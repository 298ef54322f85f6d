@_spi(KeychainFileInternals) import KeychainCrypto

/// Applying what authenticated to the index, noting what was lost, and finding the next plausible frame
/// after damage.
extension RecoveringReader {
    mutating func applyRecords() {
        var lost: Set<ItemID> = []
        for (position, record) in records.enumerated() {
            let isFinal = position == records.count - 1
            var entries: [DecodedEntry] = []
            var losses: [Damage] = []
            for entry in record.entries {
                switch entry {
                case .put(let attributesIndex, let secretIndex):
                    let attributesSlot = slots[attributesIndex]
                    if let decoded = attributes[attributesIndex], let secretIndex, slots[secretIndex].verified {
                        entries.append(RecordDecoder.putEntry(
                            decoded, window: bytes, secretBox: slots[secretIndex].range, record: attributesSlot.record,
                            entryIndex: attributesSlot.entryIndex,
                            attributesTag: ChainValue(bytes, endingAt: attributesSlot.range.upperBound),
                            attributesBoxCount: attributesSlot.range.count))
                    } else {
                        let id = attributes[attributesIndex]?.id ?? secretIndex.flatMap { slots[$0].itemID }
                        let reason: String
                        if let problem = undecodable[attributesIndex] {
                            reason = "its attributes authenticate but do not decode: \(problem)"
                        } else if attributes[attributesIndex] == nil {
                            reason = "its attributes box does not authenticate"
                        } else {
                            reason = secretIndex == nil ? "its secret box cannot be found" : "its secret box does not authenticate"
                        }
                        losses.append(Damage(offset: attributesSlot.range.lowerBound - 4, itemID: id, loss: .item, reason: reason))
                    }
                case .delete(let slotIndex):
                    if let id = deletedIDs[slotIndex] {
                        entries.append(.delete(id: id))
                    } else {
                        losses.append(Damage(
                            offset: slots[slotIndex].range.lowerBound - 4, loss: .deletion,
                            reason: undecodable[slotIndex] ?? "its box does not authenticate"))
                    }
                }
            }
            // What a crash left after the acknowledged end is not applied (SPEC.md §9.3): a final record starting
            // exactly there that did not verify as stored.
            let repaired = record.repaired || slotRanges.contains { $0.record == position && $0.slots.contains { repairedSlots.contains($0) } }
            if isFinal, !losses.isEmpty || !record.complete || repaired, isAcknowledgedEnd(record.frameStart) {
                damage.append(Damage(
                    offset: record.frameStart, loss: .crashRemnant(byteCount: record.frameEnd - record.frameStart),
                    reason: "the final record does not verify and starts after the acknowledged end"))
                continue
            }
            damage += losses
            for loss in losses where loss.loss == .item {
                guard let id = loss.itemID else { continue }
                lost.insert(id)
                if index[id] != nil { try? index.apply([.delete(id: id)]) }
            }
            do throws(IndexConflict) {
                try index.apply(entries)
            } catch {
                for entry in entries {
                    do throws(IndexConflict) {
                        try index.apply([entry])
                    } catch {
                        if case .delete(let id) = entry, lost.contains(id) { continue }
                        let id: ItemID
                        switch entry {
                        case .put(let putID, _, _): id = putID
                        case .delete(let deleteID): id = deleteID
                        }
                        damage.append(Damage(offset: record.frameStart, itemID: id, loss: .conflict, reason: "\(error)"))
                    }
                }
            }
            for entry in entries {
                if case .put(let id, _, _) = entry { lost.remove(id) }
            }
            // The head moves past records whose every box authenticated (repaired ones included).
            if losses.isEmpty && record.complete {
                let chain = Array(bytes[(record.frameEnd - 16)..<record.frameEnd])
                head = Head(epoch: context.epoch, sequence: record.fields.sequence, chainValue: chain)
                if record.fields.sequence == watchedSequence { watchedChain = chain }
            }
        }
    }

    /// Reports that the file ends at `size`, before what the lock file acknowledged.
    mutating func noteMissing(from size: Int, upTo acknowledgedEnd: Int) {
        guard acknowledgedEnd > size else { return }
        damage.append(Damage(
            offset: size, loss: .region(byteCount: acknowledgedEnd - size),
            reason: "the file ends before the end the lock file acknowledged (\(acknowledgedEnd)): acknowledged records are missing"))
    }

    // MARK: Resynchronising

    /// Whether a frame ending at `offset` is followed by the end of the file or by a plausible frame header.
    func framePlausiblyEnds(at offset: Int) -> Bool {
        if offset == bytes.count { return true }
        guard let length = u32(offset), let check = u32(offset + 4), offset + 17 <= bytes.count else { return false }
        return check == ~length && length >= Format.minimumBodyLength && length <= Format.maximumBodyLength
            && offset + Format.frameHeaderSize + Int(length) <= bytes.count && (1...3).contains(bytes[offset + 8])
    }

    /// The first offset after `offset` holding a plausible frame header (SPEC.md §9.2 step 2) with a sequence
    /// number of at least `minimumSequence`; `nil` if there is none.
    func nextPlausibleFrame(after offset: Int, minimumSequence: UInt64) -> Int? {
        var start = offset + 1
        while start + 17 <= bytes.count {
            if let length = u32(start), let check = u32(start + 4), check == ~length,
               length >= Format.minimumBodyLength, length <= Format.maximumBodyLength,
               start + Format.frameHeaderSize + Int(length) <= bytes.count, (1...3).contains(bytes[start + 8]),
               let sequence = u64(start + 9), sequence >= minimumSequence {
                return start
            }
            start += 1
        }
        return nil
    }
}
