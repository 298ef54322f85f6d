/// The entries a ``Batch`` staged, in order, as the record encoder reads them: the entries the batch keeps
/// one by one, then the run of plain adds staged after them, which the batch keeps only as positions in its
/// index.
///
/// A plain add (a new id, a free primary key) puts its item straight into the index, where the item's block
/// already holds everything its entry needs: the attributes and, reserved, the secret. Keeping a 56-byte
/// ``LogEntry`` per add besides would cost 5.6 MB in a 100,000-item bulk load, so such adds are made into
/// entries only here, as the encoder reaches them — or, if the batch stages anything else after them, by
/// ``Batch`` before it does (see its `trailingAdds`).
///
/// The view holds a copy of the batch's index; the caller drops it before the batch changes the index again,
/// so that the copy never has to be made real.
struct BatchEntries: RandomAccessCollection {
    /// The entries kept one by one.
    let kept: [LogEntry]
    /// The batch's index, whose positions `trailingAdds` holds the items of the run of plain adds.
    let index: ItemIndex
    let trailingAdds: Range<Int>

    var startIndex: Int { 0 }
    var endIndex: Int { kept.count + trailingAdds.count }

    subscript(position: Int) -> LogEntry {
        if position < kept.count { return kept[position] }
        return Self.plainAdd(index.item(atPosition: trailingAdds.lowerBound + position - kept.count))
    }

    /// The entry of a plain add whose item is `item`: its attributes, and the secret in its reserved block.
    static func plainAdd(_ item: StoredItem) -> LogEntry {
        let attributes = item.attributes
        let layout = attributes.encoded.storage.layout
        return .put(id: item.id, attributes: attributes, secret: .inReservedBlock(count: layout.boxByteCount - Format.boxOverhead))
    }
}
