import Foundation
@testable import KeychainFile

/// The commit slots of a format version 2 file in the crash trials (Docs/FormatVersion2.md §3): an append
/// writes its records past the log's end, then the commit slot the last commit did not use. A power loss
/// during that append can lose the records, the slot, or both; a tear after a kill therefore finds the slot
/// the step in flight wrote, and either erases it (its write never reached the disk) or keeps it while the
/// records are torn (the slot reached the disk before them).
enum CrashSlotTear {
    /// The place (0 or 1) of the commit slot whose seal says the log was written past `end` — the file's size
    /// after the last acknowledged step — so that the step in flight wrote it; `nil` if neither does, or the
    /// file does not open with `password`.
    static func pendingSlot(_ path: String, password: String, end: Int) -> Int? {
        guard let keychain = try? Keychain.open(at: path, credential: .password(password)),
              let log = keychain.withLock({ keychain.log as? RecordLogV2 }),
              let bytes = try? fileBytes(path)
        else { return nil }
        for (place, offset) in HealingLayout.slotOffsets.enumerated() where bytes.count >= offset + CommitSlot.length {
            let slot = CommitSlot.decode(
                Array(bytes[offset..<(offset + CommitSlot.length)]), headerKey: log.state.headerKey, epoch: log.epoch)
            if let slot, HealingLayout.physicalEnd(ofLog: Int(slot.seal.writtenEnd)) > end { return place }
        }
        return nil
    }

    /// The epoch and the physical end of the last verified record of the format version 2 file at `path`,
    /// opened with `password` — past the file's size when the newest commit's missing bytes were repaired from
    /// its parity; `nil` if it is not of version 2 or does not open.
    static func verifiedEnd(_ path: String, password: String) -> (epoch: UInt64, end: Int)? {
        guard let keychain = try? Keychain.open(at: path, credential: .password(password)),
              let log = keychain.withLock({ keychain.log as? RecordLogV2 })
        else { return nil }
        return (log.epoch, HealingLayout.physicalEnd(ofLog: log.end))
    }

    /// Overwrites the commit slot at `place` with zeros: read as no slot, as if its write had not reached the disk.
    static func erase(_ path: String, slot place: Int) -> Bool {
        guard let handle = FileHandle(forUpdatingAtPath: path) else { return false }
        defer { try? handle.close() }
        do {
            try handle.seek(toOffset: UInt64(HealingLayout.slotOffsets[place]))
            try handle.write(contentsOf: Data(count: CommitSlot.length))
            return true
        } catch {
            return false
        }
    }

    /// Whether neither an add nor a compaction changes the file at `path`: what a file whose newest commit's
    /// records are set aside must do until it is repaired. `nil` if so, else what went wrong.
    static func writesRefused(_ path: String, password: String) -> String? {
        guard let before = try? fileBytes(path) else { return "the file cannot be read" }
        do {
            let keychain = try Keychain.open(at: path, credential: .password(password))
            do {
                try keychain.add(GenericPassword(service: "chaos probe", account: "set aside", password: "refused"))
                return "an add succeeded on a file whose newest commit is set aside"
            } catch {}
            do {
                try keychain.compact()
                return "a compaction succeeded on a file whose newest commit is set aside"
            } catch {}
        } catch {
            return "the file no longer opens: \(error)"
        }
        guard let after = try? fileBytes(path), after == before else { return "a refused write changed the file" }
        return nil
    }
}
