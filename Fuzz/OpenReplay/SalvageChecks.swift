@testable import KeychainFile

/// Salvage and recovering opens of version 1 files (SPEC.md §17): what the open-replay target checks besides
/// the shared ``OpenedKeychainChecks``, through ``FormatV1Checks``.
enum SalvageChecks {
    /// A recovering open of a damaged file serves exactly what salvage keeps, reading every secret.
    static func checkRecovery(_ store: inout FuzzStore, credential: Credential) {
        let recovered: Keychain
        do {
            recovered = try store.openRecovering(with: credential)
        } catch {
            trace("\(credential.traceName): recovering open: \(error)")
            return
        }
        let contents = KeychainContents(of: recovered, FormatV1Checks.self)
        Invariant.check(contents.items.count == recovered.count, "recovery: index count \(recovered.count) ≠ \(contents.items.count) items")
        ReadPathChecks.run(recovered, contents: contents)
        do {
            try recovered.add(GenericPassword(service: "fuzz.harness.invalid", account: "appended", password: "appended"))
            Invariant.check(false, "a keychain opened with recovery accepted a write")
        } catch {
        }
    }

    /// Salvage of a file that opened keeps everything and reports no damage; salvage of a damaged file
    /// writes a file that opens with the items it reports.
    static func checkSalvage(_ bytes: [UInt8], credential: Credential, opened: (contents: KeychainContents, head: Head)?) {
        var store = FuzzStore(bytes)
        let report: SalvageReport
        do {
            report = try store.salvage(with: credential, to: "/fuzz/salvaged.kcf")
        } catch {
            Invariant.check(opened == nil, "salvage of a file that opened failed: \(error)")
            return
        }
        if let opened {
            Invariant.check(report.damage == nil, "salvage found damage in a file that opened: \(report.damage!)")
            Invariant.check(report.keptHead == opened.head, "salvage kept head \(report.keptHead), open saw \(opened.head)")
            Invariant.check(report.itemCount == opened.contents.items.count, "salvage kept \(report.itemCount) items")
        }
        do {
            let salvaged = try store.open("/fuzz/salvaged.kcf", with: credential)
            let contents = KeychainContents(of: salvaged, FormatV1Checks.self)
            Invariant.check(contents.items.count == report.itemCount, "the salvaged file holds \(contents.items.count) of \(report.itemCount) items")
            Invariant.check(salvaged.tornTail == nil, "the salvaged file has a torn tail")
            if let opened { Invariant.check(contents == opened.contents, "salvage changed the items") }
        } catch {
            Invariant.check(false, "the salvaged file does not open: \(error)")
        }
    }
}
