import Foundation
@_spi(Fixtures) import KeychainFile
import KeychainCrypto
import KeychainTestSupport

/// The fixtures of `Fixtures/v2`: the items and rewrites of version 1's catalogue written in format version 2,
/// and damage that version 2 repairs, sets aside or refuses (Docs/FormatVersion2.md §2, §3).
extension FixtureWriter {
    static let catalogueV2: [(name: String, make: Make)] = [
        ("worked-example", { try $0.workedExample($1) }),
        ("empty", { try $0.empty($1) }),
        ("generic-password", { try $0.genericPassword($1) }),
        ("internet-password", { try $0.internetPassword($1) }),
        ("certificate", { try $0.certificate($1) }),
        ("key", { try $0.key($1) }),
        ("identity", { try $0.identity($1) }),
        ("thousand-items", { try $0.thousandItems($1) }),
        ("nfc-password", { try $0.nfcPasswordV2($1) }),
        ("raw-key", { try $0.rawKeyFixture($1) }),
        ("two-key-slots", { try $0.twoKeySlots($1) }),
        ("argon2id-password", { try $0.argon2idPasswordV2($1) }),
        ("compacted", { try $0.compacted($1) }),
        ("credentials-changed", { try $0.credentialsChanged($1) }),
        ("repaired-flipped-bits", { try $0.repairedV2($1, .flippedBits) }),
        ("repaired-sector", { try $0.repairedV2($1, .sector) }),
        ("repaired-header-copy", { try $0.repairedV2($1, .headerCopy) }),
        ("crash-remnant", { try $0.crashRemnantV2($1) }),
        ("power-cut-to-older-commit", { try $0.powerCutV2($1) }),
        ("newest-commit-unrepairable", { try $0.newestCommitUnrepairableV2($1) }),
        ("older-records-unrepairable", { try $0.olderRecordsUnrepairableV2($1) }),
        ("both-header-copies-destroyed", { try $0.headersDestroyedV2($1) }),
        ("truncated-header", { try $0.truncatedHeaderV2($1) }),
        ("wrong-password", { try $0.wrongPassword($1) }),
        ("not-a-keychain", { try $0.notAKeychain($1) }),
    ]

    /// Where things lie in a version 2 file (Docs/FormatVersion2.md §1): header copy A, the two commit slots, header copy B,
    /// then the log's chunks of 57,088 data bytes, each complete chunk followed by 8,192 bytes of parity.
    enum LayoutV2 {
        static let headerCopyLength = 4_096
        static let slotOffsets = [4_096, 16_384]
        static let slotLength = 8_448
        static let headerBOffset = 28_672
        static let logStart = 32_768
        static let chunkData = 57_088
        static let chunkParity = 8_192

        static func physical(_ logical: Int) -> Int {
            logStart + (logical / chunkData) * (chunkData + chunkParity) + logical % chunkData
        }
    }

    /// A password whose normalisation the Unicode standard fixes but Swift's standard library got wrong
    /// (issue 30): U+0F73 decomposes to U+0F71 U+0F72 and is excluded from composition, and U+0F71 (class 129)
    /// sorts before U+0F80 (class 130).
    func nfcPasswordV2(_ name: String) throws -> ManifestJSON {
        let typed = "\u{0F40}\u{0F80}\u{0F73} Cafe\u{301}"
        let normalised = "\u{0F40}\u{0F71}\u{0F80}\u{0F72} Caf\u{E9}"
        let fixture = try newKeychain(name, seed: 9, credential: .password(typed), credentialJSON: .object(["password": .string(typed)]))
        try fixture.add(mailPassword())
        return opens(fixture, "created with U+0F40 U+0F80 U+0F73 and a decomposed é; the manifest gives the NFC of Unicode 15.0 (U+0F40 U+0F71 U+0F80 U+0F72, é composed): a reader must normalise as Docs/FormatVersion2.md §6 says",
                     credentialJSON: .object(["password": .string(normalised)]))
    }

    /// A password slot of KDF id 3, Argon2id at 128 KiB, 2 passes and 2 lanes — deliberately insecure, so that
    /// readers spend no time on it — kept as it is by a compaction (SPEC.md §21.1, §21.2).
    func argon2idPasswordV2(_ name: String) throws -> ManifestJSON {
        let keyDerivation = try PasswordKeyDerivation.insecureForTesting(argon2idMemoryKiB: 128, passes: 2, lanes: 2)
        let fixture = try newKeychain(name, seed: 40, keyDerivation: keyDerivation)
        try fixture.add(mailPassword())
        try fixture.compact()
        try fixture.add(GenericPassword(service: "svc", account: "after", password: "added after the compaction"))
        return opens(fixture, "one password slot of KDF id 3 (Argon2id, 128 KiB, 2 passes, 2 lanes: INSECURE, for tests), kept as it is by a compaction (epoch 2), then one more item added")
    }

    /// 300 items in three transactions, compacted, then five single adds: a log of a complete chunk (with its
    /// parity after it) and a partial one (whose parity is in the newest commit slot).
    func baseV2(_ name: String, seed: UInt64, lateAdds: Int = 5) throws -> FixtureKeychain {
        let fixture = try newKeychain(name, seed: seed)
        for batch in 0..<3 {
            var items: [(ItemAttributes, [UInt8])] = []
            for index in 0..<100 {
                let number = batch * 100 + index
                var item = GenericPassword(service: "service\(number % 5)", account: "account\(number)", password: "secret \(number) " + String(repeating: "x", count: number % 150))
                item.label = "item \(number)"
                items.append((try item.attributes, item.value ?? []))
            }
            try fixture.addAll(items)
        }
        try fixture.delete(Query.genericPassword(service: "service0", account: "account0"))
        try fixture.compact()
        for index in 0..<lateAdds {
            try fixture.add(GenericPassword(service: "late", account: "account\(index)", password: "late \(index)"))
        }
        return fixture
    }

    enum RepairedDamage { case flippedBits, sector, headerCopy }

    func repairedV2(_ name: String, _ damage: RepairedDamage) throws -> ManifestJSON {
        let fixture = try baseV2(name, seed: 30)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
        var random = FixtureRandom(seed: 31)
        let description: String
        switch damage {
        case .flippedBits:
            // One in the first record's bytes, so that something must be repaired; 63 anywhere in the file.
            bytes[LayoutV2.logStart + 100] ^= 0x20
            for _ in 0..<63 {
                let offset = Int(random.next() % UInt64(bytes.count))
                bytes[offset] ^= UInt8(1) << UInt8(random.next() % 8)
            }
            description = "64 bits flipped across the file, one of them in the first record; parity repairs them all"
        case .sector:
            let sector = (LayoutV2.logStart + 8_192)..<(LayoutV2.logStart + 12_288)
            for offset in sector { bytes[offset] = 0 }
            description = "the 4 KiB sector at file offset \(sector.lowerBound), in the log's first chunk, reads as zeros; parity repairs it"
        case .headerCopy:
            for offset in 0..<LayoutV2.headerCopyLength { bytes[offset] = UInt8(truncatingIfNeeded: random.next()) }
            description = "header copy A overwritten with random bytes; copy B opens the file"
        }
        try Data(bytes).write(to: URL(fileURLWithPath: fixture.path))
        return withRepaired(opens(fixture, description + "; every item opens, and the reader reports a repair"))
    }

    /// A new keychain's bytes after `count` adds, and after one more: the second with the commit slots of the
    /// first is a crash between the last add's record and its slot.
    func addsAndOneMore(_ name: String, seed: UInt64, count: Int, lastSize: Int) throws
        -> (before: FixtureKeychain, beforeBytes: [UInt8], after: FixtureKeychain, afterBytes: [UInt8])
    {
        func build(_ path: String, extra: Bool) throws -> (FixtureKeychain, [UInt8]) {
            let fixture = try FixtureKeychain(
                path: path, credential: Self.passwordCredential, credentialJSON: Self.passwordJSON, seed: seed, formatVersion: formatVersion)
            for index in 0..<count {
                try fixture.add(GenericPassword(service: "svc", account: "user\(index)", password: "password \(index)"))
            }
            if extra {
                try fixture.add(GenericPassword(service: "svc", account: "last", value: [UInt8](repeating: 0x42, count: lastSize)))
            }
            return (fixture, Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        }
        let temporary = NSTemporaryDirectory() + "/kcf-fixture-\(UUID().uuidString).kcf"
        defer {
            try? FileManager.default.removeItem(atPath: temporary)
            try? FileManager.default.removeItem(atPath: temporary + ".lock")
        }
        let (before, beforeBytes) = try build(temporary, extra: false)
        let (after, afterBytes) = try build(path(name), extra: true)
        guard Array(afterBytes[LayoutV2.logStart..<beforeBytes.count]) == Array(beforeBytes[LayoutV2.logStart...]) else {
            throw FixtureError("the keychain with one more add does not extend the one without")
        }
        return (before, beforeBytes, after, afterBytes)
    }

    /// The log end of `bytes` as a reader finds it: the newest commit's written end is not read here, so the
    /// fixture derives it from the file's size (a file whose log ends in its first chunk).
    func logEnd(ofFileSize size: Int) throws -> Int {
        guard size - LayoutV2.logStart < LayoutV2.chunkData else { throw FixtureError("the fixture's log passed its first chunk") }
        return size - LayoutV2.logStart
    }

    func crashRemnantV2(_ name: String) throws -> ManifestJSON {
        let built = try addsAndOneMore(name, seed: 32, count: 3, lastSize: 300)
        var bytes = built.afterBytes
        // The slots as they were before the last add: its record reached the file, its commit did not.
        for offset in LayoutV2.slotOffsets[0]..<LayoutV2.headerBOffset { bytes[offset] = built.beforeBytes[offset] }
        try Data(bytes).write(to: URL(fileURLWithPath: built.after.path))
        let end = try logEnd(ofFileSize: built.beforeBytes.count)
        return tornTailV2(
            opens(model: built.before.model, credentialJSON: Self.passwordJSON, head: built.before.headJSON(),
                  "three adds, then a fourth whose record reached the file but whose commit slot did not (a crash): the record is a remnant, not applied, and the next write cuts it"),
            offset: end, mayHoldAcknowledgedData: false)
    }

    func powerCutV2(_ name: String) throws -> ManifestJSON {
        let built = try addsAndOneMore(name, seed: 33, count: 3, lastSize: 20_000)
        // The last add's commit slot reached the disk, its record and the file's new size did not.
        let bytes = Array(built.afterBytes[0..<built.beforeBytes.count])
        try Data(bytes).write(to: URL(fileURLWithPath: built.after.path))
        let end = try logEnd(ofFileSize: built.beforeBytes.count)
        return tornTailV2(
            opens(model: built.before.model, credentialJSON: Self.passwordJSON, head: built.before.headJSON(),
                  "three adds, then a fourth whose commit slot reached the disk but whose record and the file's new size did not (a power loss): the file opens with what the older commit holds, and the newest commit, acknowledged, is reported as lost — writes are refused until the file is repaired"),
            offset: end, mayHoldAcknowledgedData: true)
    }

    func newestCommitUnrepairableV2(_ name: String) throws -> ManifestJSON {
        let built = try addsAndOneMore(name, seed: 34, count: 3, lastSize: 300)
        var bytes = built.afterBytes
        let end = try logEnd(ofFileSize: built.beforeBytes.count)
        // The last record's bytes damaged, and the parity in both commit slots too: nothing can repair it.
        for offset in (LayoutV2.physical(end) + 40)..<(LayoutV2.physical(end) + 120) { bytes[offset] ^= 0xFF }
        for slot in LayoutV2.slotOffsets {
            for offset in (slot + LayoutV2.slotLength - LayoutV2.chunkParity)..<(slot + LayoutV2.slotLength) { bytes[offset] ^= 0xA5 }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: built.after.path))
        return tornTailV2(
            opens(model: built.before.model, credentialJSON: Self.passwordJSON, head: built.before.headJSON(),
                  "four adds; the last one's record and the parity in both commit slots damaged beyond repair: the records of the newest commit are set aside as possibly acknowledged, never cut, and writes are refused"),
            offset: end, mayHoldAcknowledgedData: true)
    }

    func olderRecordsUnrepairableV2(_ name: String) throws -> ManifestJSON {
        let fixture = try baseV2(name, seed: 35)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
        // 40,000 bytes of the first chunk's data zeroed: more than its parity can repair.
        let damaged = LayoutV2.logStart..<(LayoutV2.logStart + 40_000)
        for offset in damaged { bytes[offset] = 0 }
        try Data(bytes).write(to: URL(fileURLWithPath: fixture.path))
        return fails("the first 40,000 bytes of the log zeroed, beyond what parity repairs: the compaction's records are acknowledged, so the file is corrupted (error offsets of records are log offsets)",
                     credential: Self.passwordJSON, error: "corrupted", range: 0..<40_000)
    }

    func headersDestroyedV2(_ name: String) throws -> ManifestJSON {
        let fixture = try baseV2(name, seed: 36)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
        var random = FixtureRandom(seed: 37)
        for offset in Array(0..<LayoutV2.headerCopyLength) + Array(LayoutV2.headerBOffset..<LayoutV2.logStart) {
            bytes[offset] = UInt8(truncatingIfNeeded: random.next())
        }
        try Data(bytes).write(to: URL(fileURLWithPath: fixture.path))
        return fails("both header copies overwritten with random bytes: nothing identifies the file", credential: Self.passwordJSON,
                     error: "notAKeychain")
    }

    func truncatedHeaderV2(_ name: String) throws -> ManifestJSON {
        let fixture = try baseV2(name, seed: 38, lateAdds: 0)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
        try Data(bytes[0..<100]).write(to: URL(fileURLWithPath: fixture.path))
        return fails("the file ends 100 bytes into header copy A", credential: Self.passwordJSON, error: "corrupted", range: 0..<LayoutV2.logStart)
    }

    // MARK: Manifest fields of version 2

    /// `manifest` (or a credential's view of version 3) saying that the reader must report a repair; one whose
    /// outcome is not `opens` is returned as it is.
    func withRepaired(_ manifest: ManifestJSON) -> ManifestJSON {
        guard case .object(var members) = manifest, case .object(var expect)? = members["expect"],
              case .string("opens")? = expect["outcome"] else { return manifest }
        expect["repaired"] = .boolean(true)
        members["expect"] = .object(expect)
        return .object(members)
    }

    /// Version 2 torn tails are compared by where they start (a log offset) and whether they may hold
    /// acknowledged data.
    func tornTailV2(_ manifest: ManifestJSON, offset: Int, mayHoldAcknowledgedData: Bool) -> ManifestJSON {
        guard case .object(var members) = manifest, case .object(var expect)? = members["expect"] else { return manifest }
        expect["tornTail"] = .object(["offset": .integer(Int64(offset)), "mayHoldAcknowledgedData": .boolean(mayHoldAcknowledgedData)])
        members["expect"] = .object(expect)
        return .object(members)
    }
}
