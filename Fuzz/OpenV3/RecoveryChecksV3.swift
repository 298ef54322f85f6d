@testable import KeychainFile

/// Recovering opens and salvage of version 3 files (SPEC.md §37.6), with each credential: hostile bytes never trap
/// them; a file that opens whole is served the same with recovery and no damage listed, and salvage keeps all of it;
/// a salvaged file opens with the items its report counts; salvage refuses a scoped credential before writing.
enum RecoveryChecksV3 {
    static func run(_ bytes: [UInt8], known: V3Credentials.Known) {
        var store = FuzzStore(bytes)
        let opened = try? store.open(with: known.credential)
        let whole = opened.flatMap { $0.tornTail == nil ? KeychainContents(of: $0, FormatV3Checks.self) : nil }
        let recovered: Keychain
        do {
            recovered = try Keychain.open(
                at: FuzzStore.path, credential: known.credential, options: Keychain.OpenOptions(autoCompaction: .disabled, recover: true),
                random: RandomSource(store.random), clock: FuzzStore.clock, fileSystem: store.fileSystem)
        } catch {
            trace("\(known.name): recovering open: \(error)")
            Invariant.check(whole == nil, "\(known.name): a file that opens whole does not open with recovery: \(error)")
            return
        }
        let contents = KeychainContents(of: recovered, FormatV3Checks.self)
        if let whole {
            Invariant.check(contents.itemsByID == whole.itemsByID, "\(known.name): recovery served other items than the open")
            Invariant.check(recovered.recovery?.damage.isEmpty == true, "\(known.name): recovery listed damage in a file that opens whole: \(recovered.recovery?.damage ?? [])")
        }
        do {
            try recovered.add(GenericPassword(service: "fuzz.harness.invalid", account: "appended", password: "appended"))
            Invariant.check(false, "\(known.name): a keychain opened with recovery accepted a write")
        } catch {
        }
        checkSalvage(&store, known: known, whole: whole)
    }

    private static func checkSalvage(_ store: inout FuzzStore, known: V3Credentials.Known, whole: KeychainContents?) {
        let destination = "/fuzz/salvaged.kcf"
        let report: SalvageReport
        do {
            report = try RecordLogV3.salvage(
                from: FuzzStore.path, credential: known.credential, to: destination, replacing: false, fileSystem: store.fileSystem,
                using: &store.random)
        } catch {
            trace("\(known.name): salvage: \(error)")
            Invariant.check(!store.fileSystem.exists(destination), "\(known.name): a salvage that failed left a file")
            Invariant.check(whole == nil || known.groups != nil, "\(known.name): salvage of a file that opens whole failed: \(error)")
            return
        }
        Invariant.check(known.groups == nil, "\(known.name): salvage accepted a credential scoped to some groups")
        if let whole {
            Invariant.check(report.damage == nil, "\(known.name): salvage found damage in a file that opens whole")
            Invariant.check(report.itemCount == whole.items.count, "\(known.name): salvage kept \(report.itemCount) of \(whole.items.count) items")
        }
        do {
            let salvaged = try store.open(destination, with: known.credential)
            let contents = KeychainContents(of: salvaged, FormatV3Checks.self)
            Invariant.check(contents.items.count == report.itemCount, "\(known.name): the salvaged file holds \(contents.items.count) of \(report.itemCount) items")
            // A version 3 rewrite writes each group's items in its own pages: the added order may change, not the items.
            if let whole { Invariant.check(contents.itemsByID == whole.itemsByID, "\(known.name): salvage changed the items") }
        } catch {
            Invariant.check(false, "\(known.name): the salvaged file does not open: \(error)")
        }
    }
}
