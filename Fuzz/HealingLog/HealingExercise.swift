@testable import KeychainCrypto
@testable import KeychainFile

/// What the harness does with any log, damaged or not: everything a reader can do without writing.
enum HealingExercise {
    static let key = SymmetricKey(data: [UInt8](repeating: 0x4B, count: 32))

    /// Opens the log of `file`, reads it whole in pieces, repairs every chunk and reads it through a
    /// HealingFileHandle (unless `repairing` is false: then it only opens and reads). Returns the open log and
    /// each chunk's repair, or `nil` if the open threw.
    @discardableResult
    static func readEverything(
        _ file: any KeychainFileHandle, rewriteEnd: Int, repairing: Bool = true
    ) -> (log: HealingLog, repairs: [HealingLog.ChunkRepair])? {
        guard let log = try? HealingLog(opening: file, headerKey: key, epoch: 1, rewriteEnd: rewriteEnd) else { return nil }
        let end = log.writtenEnd
        Invariant.check(end >= 0 && end <= HealingLog.maximumLogLength, "written end \(end)")
        // The open bounds the log by the file's size (a longer claim is missing bytes or refused), so reading
        // it whole is bounded by the input.
        var position = 0
        while position < end {
            let count = min(end - position, 40_000)
            guard let piece = try? log.read(at: position, count: count) else { break }
            Invariant.check(piece.count == count, "read \(piece.count) bytes of \(count)")
            position += count
        }
        var repairs: [HealingLog.ChunkRepair] = []
        guard repairing else { return (log, repairs) }
        for chunk in 0..<((end + ChunkParity.dataLength - 1) / ChunkParity.dataLength) {
            guard let repair = try? log.repair(chunk: chunk) else { continue }
            let expected = min(ChunkParity.dataLength, end - chunk * ChunkParity.dataLength)
            Invariant.check(repair.data.count == expected, "chunk \(chunk): \(repair.data.count) bytes, not \(expected)")
            Invariant.check(repair.changedOffsets.allSatisfy { $0 >= 0 && $0 < expected }, "chunk \(chunk): a change outside it")
            Invariant.check(repair.unrepairedCodewords.allSatisfy { $0 >= 0 && $0 < ChunkParity.depth }, "chunk \(chunk): codewords")
            repairs.append(repair)
        }
        let handle = HealingFileHandle(log: log)
        Invariant.check((try? handle.size()) == end, "the handle's size is the written end")
        if let whole = try? handle.readExactly(count: end, at: 0) {
            Invariant.check(whole.count == end, "the handle read \(whole.count) bytes of \(end)")
        }
        return (log, repairs)
    }
}
