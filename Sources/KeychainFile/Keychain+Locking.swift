@_spi(KeychainFileInternals) import KeychainCrypto

/// How every call takes the object's lock and the lock file, and catches up with other processes first
/// (SPEC.md §16); and how a write's durable change is acknowledged in the lock file (§16.1).
extension Keychain {
    /// Runs `body` under this object's lock, after catching up with what other processes committed (SPEC.md
    /// §16): with no system call when the lock file's change counter is as it was at a path check less than
    /// 10 ms ago (unless `checkingPath`), else after one `stat` of the path and a read of the header's first
    /// sectors (``HeaderFingerprint``), and under the lock file, shared, when those show a change.
    func withRead<Result>(
        checkingPath: Bool = false, _ body: () throws(KeychainError) -> Result
    ) throws(KeychainError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        let counter = lockFile.changeCounter
        let now = MonotonicClock.nanoseconds()
        if checkingPath || !log.isKnownCurrent(counter: counter, now: now) {
            // Forgotten first: if catching up throws, the next read must look again, not trust the old check.
            log.noteCurrent(counter: nil, at: now)
            if try log.hasChanged() {
                _ = try lockFile.lock(exclusive: false, wait: true)
                defer { lockFile.unlock() }
                try catchUp()
            }
            log.noteCurrent(counter: counter, at: now)
        }
        return try body()
    }

    /// Runs `body` under this object's lock and the lock file held exclusively, after catching up: every
    /// write, compaction and credential change (SPEC.md §16). The lock file's change counter tells other processes
    /// of a change when `body` returns, or throws after it may have changed the file: after it began writing in
    /// place (``writesBegun``), moved this keychain to another file (a rewrite renamed into place, an upgrade), or
    /// left its log at another head or to be read again. A call refused before any of that — by catching up, by
    /// ``checkOpenFileWritable()``, or by `body` before it wrote — leaves the counter as it was, so that other
    /// processes do not look the path up for nothing.
    ///
    /// - Throws: `KeychainError.readOnly` before anything is written if the keychain can only be read (its lock
    ///   file, its file, or a second name for its file: ``checkOpenFileWritable()``).
    func withWrite<Result>(_ body: () throws(KeychainError) -> Result) throws(KeychainError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        try log.checkWritable()
        if let lockReadOnly { throw .readOnly(path: path, reason: lockReadOnly.description) }
        _ = try lockFile.lock(exclusive: true, wait: true)
        var changed = false
        defer { if changed { lockFile.unlock() } else { lockFile.unlockUnchanged() } }
        // Random bytes drawn ahead for this operation go with it (see RandomSource).
        defer { random.discardPool() }
        try catchUp()
        try checkOpenFileWritable()
        let before = (log.head, log.end)
        let (logBefore, fileBefore) = (log, log.file)
        writesBegun = false
        // Whatever this call made durable is acknowledged in the lock file before the lock is released — also when
        // the call throws after its change took effect (SPEC.md §16.1).
        let result: Result
        do {
            result = try body()
        } catch {
            changed = writesBegun || log.mustReload || log !== logBefore || log.file !== fileBefore || log.head != before.0
                || log.end != before.1
            _ = acknowledgeIfChanged(since: before)
            throw error
        }
        changed = true
        if let failure = acknowledgeIfChanged(since: before) { throw failure }
        return result
    }

    /// Catches up with what other processes committed. A version 1 log whose path now holds a version 2 file —
    /// another process upgraded it (`upgradeFormat()`) — gives way to version 2's log of that file. Called with
    /// the lock file held.
    func catchUp() throws(KeychainError) {
        let acknowledgement = lockFile.readAcknowledgement()
        do throws(KeychainError) {
            try log.refresh(&index, acknowledgement: acknowledgement)
        } catch {
            guard let old = log as? RecordLog, let (upgraded, items) = try RecordLogV2.openUpgraded(replacing: old, clock: clock) else {
                throw error
            }
            log = upgraded
            index = items
        }
    }

    /// Throws `KeychainError.readOnly` if the file now open (after catching up: it may be another than the one
    /// opened) was opened for reading only, or has more than one name. A second name (hard link) would take
    /// another lock file, and a rewrite would split the names (SPEC.md §16); it can appear at any time, so it
    /// is looked for (one fstat) before every write. Called in `withWrite`.
    func checkOpenFileWritable() throws(KeychainError) {
        if let refusal = log.file.writeRefusal {
            throw .readOnly(path: path, reason: ReadOnlyReason.fileNotWritable(errno: refusal).description)
        }
        let names = try log.file.linkCount()
        if names > 1 { throw .readOnly(path: path, reason: ReadOnlyReason.hardLinks(count: names).description) }
    }

    /// Writes the acknowledgement of the log's head to the lock file if the head or end moved since `before`
    /// (SPEC.md §16.1). If that fails, the stale block is withdrawn: it would make a later reader take damage
    /// to this change for a crash remnant, where no block at all makes it keep the change. Returns
    /// `notConfirmedDurable` only when neither could be done.
    func acknowledgeIfChanged(since before: (Head, Int)) -> KeychainError? {
        guard log.head != before.0 || log.end != before.1 else { return nil }
        do throws(KeychainError) {
            if let acknowledgement = log.acknowledgementBytes() {
                try lockFile.writeAcknowledgement(acknowledgement)
            } else if lockFile.readAcknowledgement()?.starts(with: Acknowledgement.magic) == true {
                // A format that needs none: a block an earlier file left says nothing about this one. Once it is
                // gone, commits leave the lock file alone (a synced write per commit otherwise).
                try lockFile.withdrawAcknowledgement()
            }
            return nil
        } catch {
            do throws(KeychainError) {
                try lockFile.withdrawAcknowledgement()
                return nil
            } catch let withdrawal {
                return .notConfirmedDurable(
                    operation: "the change",
                    reason: "it is in the file and synced, but the lock file could not acknowledge it (\(error)) nor withdraw its "
                        + "older acknowledgement (\(withdrawal)), which would let damage to this change pass for a crash remnant")
            }
        }
    }

    /// Calls `body` with the index in place. Called with the lock held, for reading.
    ///
    /// A call such as `index.matching(query)` on this class's stored property first copies the struct,
    /// retaining and then releasing each of its buffers: a tenth of a lookup's time. An `inout` access lends
    /// it without a copy. `body` must not change the index, and must not reach `self.index` in any other way
    /// (such as `statisticsLocked()` or `makeBatch()`): the property's accesses are not checked at run time.
    func withIndexInPlace<Result>(_ body: (inout ItemIndex) throws(KeychainError) -> Result) throws(KeychainError) -> Result {
        try body(&index)
    }

    func withLock<Result>(_ body: () throws(KeychainError) -> Result) throws(KeychainError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    func withLock<Result>(_ body: () -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
