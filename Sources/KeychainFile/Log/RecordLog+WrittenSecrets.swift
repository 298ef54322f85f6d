import KeychainCrypto

extension RecordLog {
    /// Where the sealed secrets of the items a rewrite wrote are, in the order of the items: each record's offset
    /// in the new file and its puts, whose boxes the encoder only wrote (`keepingSecrets: false`). A rewrite
    /// reads them back once the new file is in place (``forEach(readingFrom:itemID:_:)``) instead of holding every new
    /// box in memory beside every old one until then (76 bytes an item).
    struct WrittenSecrets {
        /// The new file's record context: the read-back boxes are verified under it.
        let context: RecordContext
        private(set) var records: [(offset: Int, encoded: RecordEncoder.Encoded)] = []
        private(set) var count = 0

        init(context: RecordContext) { self.context = context }

        mutating func append(_ record: RecordEncoder.Encoded, at offset: Int) {
            precondition(record.puts.isEmpty, "a rewrite's record, whose boxes were only written")
            records.append((offset, record))
            count += record.writtenPuts.count
        }

        /// Reads each record's secret boxes and their chain values back from `file`, verifies them, and calls
        /// `body` with each item's rank and sealed secret, in rank order: the chain value is the attributes box's
        /// tag, the 16 bytes before the secret box's length field (SPEC.md §7.1–7.2).
        ///
        /// The boxes are verified because they come from the file, not from memory: a secret in memory is
        /// decrypted without its tag being checked again (``SealedSecret/decrypt(using:)``).
        ///
        /// - Parameter itemID: The id of the item of a rank, which its secret box's associated data names.
        /// - Throws: what reading throws; `.corrupted` if a box's length field is not what was written or a box
        ///   does not verify. The items of the boxes verified before the failing one's group of eight have been
        ///   passed to `body`.
        func forEach(
            readingFrom file: any KeychainFileHandle, itemID: (Int) -> ItemID, _ body: (Int, SealedSecret) -> Void
        ) throws(KeychainError) {
            var rank = 0
            for (offset, record) in records {
                guard let first = record.writtenPuts.first?.secretFrameOffset else { continue }
                // From the first put's chain value to the end of the frame, which is the last put's secret box.
                let start = Int(first) - Format.tagSize - 4
                precondition(start >= 0 && start < record.frameCount, "a written record's boxes")
                let bytes = try file.readExactly(count: record.frameCount - start, at: offset + start)
                var boxes: [Range<Int>] = []
                boxes.reserveCapacity(record.writtenPuts.count)
                for put in record.writtenPuts {
                    let boxStart = Int(put.secretFrameOffset) - start
                    let boxCount = Int(bytes[(boxStart - 4)..<boxStart].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                    guard boxCount >= Format.boxOverhead, boxCount <= bytes.count - boxStart else {
                        throw .corrupted(
                            offset: offset + start + boxStart - 4, reason: "a secret box this rewrite wrote does not read back (length \(boxCount))")
                    }
                    boxes.append(boxStart..<(boxStart + boxCount))
                }
                func previousChain(_ box: Range<Int>) -> ChainValue { ChainValue(bytes, endingAt: box.lowerBound - 4) }
                let recordKey = context.boxKey(forRecord: record.sequence, kind: record.kind, entryCount: record.entryCount)
                for group in stride(from: 0, to: boxes.count, by: SecretTagBatch.limit) {
                    let puts = group..<min(group + SecretTagBatch.limit, boxes.count)
                    let failing = SecretTagBatch.firstFailing(
                        count: puts.count, in: bytes, box: { boxes[group + $0] },
                        writeAAD: {
                            BoxAAD.write(
                                fileID: context.fileID, epoch: context.epoch, sequence: record.sequence, kind: record.kind,
                                entryCount: record.entryCount, entryIndex: record.writtenPuts[group + $0].entryIndex, role: .secret,
                                itemID: itemID(rank + $0), previousChain: previousChain(boxes[group + $0]), into: $1)
                        },
                        key: recordKey)
                    if let failing {
                        throw .corrupted(
                            offset: offset + start + boxes[group + failing].lowerBound,
                            reason: "a secret box this rewrite wrote does not verify when read back")
                    }
                    for put in puts {
                        let box = boxes[put]
                        body(rank, SealedSecret(
                            box: Array(bytes[box]), sequence: record.sequence, kind: record.kind, entryCount: record.entryCount,
                            entryIndex: record.writtenPuts[put].entryIndex, previousChain: previousChain(box).bytes,
                            entryByteCount: Int(record.writtenPuts[put].entryByteCount)))
                        rank += 1
                    }
                }
            }
        }
    }
}
