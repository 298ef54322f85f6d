import Foundation
@_spi(Fixtures) import KeychainFile
import KeychainCrypto
import KeychainTestSupport

/// Writes one fixture at a time into a directory: the catalogue of fixtures, the items several share, and
/// the helpers that damage a file on purpose.
struct FixtureWriter {
    let directory: String
    let certificates: String
    /// The format version of the keychains written: the catalogue of `Fixtures/v1`, `Fixtures/v2` or `Fixtures/v3`.
    let formatVersion: Int

    typealias Make = @Sendable (FixtureWriter, String) throws -> ManifestJSON
    static let catalogue: [(name: String, make: Make)] = [
        ("worked-example", { try $0.workedExample($1) }),
        ("empty", { try $0.empty($1) }),
        ("generic-password", { try $0.genericPassword($1) }),
        ("internet-password", { try $0.internetPassword($1) }),
        ("certificate", { try $0.certificate($1) }),
        ("key", { try $0.key($1) }),
        ("identity", { try $0.identity($1) }),
        ("thousand-items", { try $0.thousandItems($1) }),
        ("nfc-password", { try $0.nfcPassword($1) }),
        ("raw-key", { try $0.rawKeyFixture($1) }),
        ("two-key-slots", { try $0.twoKeySlots($1) }),
        ("compacted", { try $0.compacted($1) }),
        ("credentials-changed", { try $0.credentialsChanged($1) }),
        ("torn-tail-frame-header", { try $0.tornTail($1, cut: .frameHeader) }),
        ("torn-tail-mid-record", { try $0.tornTail($1, cut: .middle) }),
        ("torn-tail-last-byte", { try $0.tornTail($1, cut: .lastByte) }),
        ("torn-tail-zeros", { try $0.tornTail($1, cut: .zeroed) }),
        ("torn-tail-garbage", { try $0.tornTail($1, cut: .garbage) }),
        ("torn-tail-frame-length-flip", { try $0.tornTail($1, cut: .lengthFlip) }),
        ("transaction-cut-short", { try $0.transactionCutShort($1) }),
        ("final-record-duplicate-key", { try $0.hostileFinalRecord($1, .duplicateKey) }),
        ("final-record-unknown-delete", { try $0.hostileFinalRecord($1, .unknownDelete) }),
        ("final-record-class-change", { try $0.hostileFinalRecord($1, .classChange) }),
        ("bit-flip-header", { try $0.damaged($1, .headerEpoch) }),
        ("bit-flip-key-slot", { try $0.damaged($1, .keySlot) }),
        ("bit-flip-frame-length", { try $0.damaged($1, .frameLength) }),
        ("bit-flip-sealed-attributes", { try $0.damaged($1, .sealedAttributes) }),
        ("bit-flip-sealed-secret", { try $0.damaged($1, .sealedSecret) }),
        ("bit-flip-tag", { try $0.damaged($1, .tag) }),
        ("record-removed", { try $0.damaged($1, .recordRemoved) }),
        ("records-swapped", { try $0.damaged($1, .recordsSwapped) }),
        ("record-duplicated", { try $0.damaged($1, .recordDuplicated) }),
        ("record-spliced", { try $0.damaged($1, .recordSpliced) }),
        ("wrong-password", { try $0.wrongPassword($1) }),
        ("unsupported-version", { try $0.damaged($1, .version) }),
        ("truncated-header", { try $0.damaged($1, .truncatedHeader) }),
        ("not-a-keychain", { try $0.notAKeychain($1) }),
    ]

    /// The catalogue of `formatVersion`.
    static func catalogue(formatVersion: Int) -> [(name: String, make: Make)] {
        switch formatVersion {
        case 2: return catalogueV2
        case 3: return catalogueV3
        default: return catalogue
        }
    }

    func writeAll() throws {
        for entry in Self.catalogue(formatVersion: formatVersion) {
            var manifest = try entry.make(self, entry.name)
            if case .object(var members) = manifest {
                members["name"] = .string(entry.name)
                members["formatVersion"] = .integer(Int64(formatVersion))
                if formatVersion == 3, members["scope"] == nil { members["scope"] = .null }
                manifest = .object(members)
            }
            try Data(manifest.rendered().utf8).write(to: URL(fileURLWithPath: path(entry.name, "json")))
        }
        // Opening and writing keychains leaves lock files beside them (SPEC.md §16); they are not fixtures.
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".kcf.lock") {
            try FileManager.default.removeItem(atPath: directory + "/" + name)
        }
    }

    func path(_ name: String, _ suffix: String = "kcf") -> String { directory + "/" + name + "." + suffix }

    static let passwordCredential = Credential.password(FixtureGenerator.password)
    static let passwordJSON = ManifestJSON.object(["password": .string(FixtureGenerator.password)])

    /// A fixture whose file opens; the manifest lists every item.
    func opens(_ fixture: FixtureKeychain, _ description: String, tornTail: (offset: Int, byteCount: Int)? = nil,
               credentialJSON: ManifestJSON? = nil, head: ManifestJSON? = nil) -> ManifestJSON {
        opens(model: fixture.model, credentialJSON: credentialJSON ?? fixture.credentialJSON,
              head: head ?? fixture.headJSON(), description, tornTail: tornTail)
    }

    func opens(model: FixtureModel, credentialJSON: ManifestJSON, head: ManifestJSON, _ description: String,
               tornTail: (offset: Int, byteCount: Int)? = nil) -> ManifestJSON {
        var expect: [String: ManifestJSON] = [
            "outcome": .string("opens"),
            "itemCount": .integer(Int64(model.expected.count)),
            "items": model.itemsJSON(),
            "head": head,
            "tornTail": .null,
        ]
        if let tornTail {
            expect["tornTail"] = .object(["offset": .integer(Int64(tornTail.offset)), "byteCount": .integer(Int64(tornTail.byteCount))])
        }
        if formatVersion >= 2 { expect["repaired"] = .boolean(false) }
        var manifest: [String: ManifestJSON] = [
            "description": .string(description),
            "credential": credentialJSON,
            "expect": .object(expect),
        ]
        if formatVersion == 3 {
            expect["groups"] = model.groupsJSON()
            expect["groupHeads"] = model.groupHeadsJSON()
            expect["tombstones"] = model.tombstonesJSON()
            manifest["expect"] = .object(expect)
            manifest["scope"] = .null
        }
        return .object(manifest)
    }

    /// A fixture whose file must fail to open with `error`; `range` is where a `corrupted` error's offset
    /// must lie.
    func fails(_ description: String, credential: ManifestJSON, error: String, range: Range<Int>? = nil,
               version: Int? = nil) -> ManifestJSON {
        var expect: [String: ManifestJSON] = ["outcome": .string("fails"), "error": .string(error)]
        if let range {
            expect["errorOffsetRange"] = .array([.integer(Int64(range.lowerBound)), .integer(Int64(range.upperBound))])
        }
        if let version { expect["version"] = .integer(Int64(version)) }
        return .object(["description": .string(description), "credential": credential, "expect": .object(expect)])
    }

    func newKeychain(_ name: String, seed: UInt64, credential: Credential = passwordCredential,
                     credentialJSON: ManifestJSON = passwordJSON, additional: [Credential] = [],
                     keyDerivation: PasswordKeyDerivation? = nil) throws -> FixtureKeychain {
        try FixtureKeychain(path: path(name), credential: credential, credentialJSON: credentialJSON, seed: seed,
                            additionalCredentials: additional, formatVersion: formatVersion, keyDerivation: keyDerivation)
    }

    // MARK: Items used by several fixtures

    func mailPassword() -> GenericPassword {
        var item = GenericPassword(service: "mail.example.com", account: "ann@example.com", password: "s3cret!")
        item.label = "Mail"
        return item
    }

    func certificateDER() throws -> [UInt8] {
        let names = try FileManager.default.contentsOfDirectory(atPath: certificates).filter { $0.hasSuffix(".der") }.sorted()
        guard let first = names.first else { throw FixtureError("no certificates in \(certificates)") }
        return Array(try Data(contentsOf: URL(fileURLWithPath: certificates + "/" + first)))
    }

    /// A keychain with three records (three generic passwords), the base of the damage fixtures.
    func threeRecords(_ name: String, seed: UInt64) throws -> FixtureKeychain {
        let fixture = try newKeychain(name, seed: seed)
        for index in 0..<3 {
            var item = GenericPassword(service: "svc", account: "user\(index)", password: "password \(index)")
            item.comment = "record \(index + 1)"
            try fixture.add(item)
        }
        return fixture
    }

    // MARK: Helpers for torn tails

    /// The first `count` records of `threeRecords(_:seed:)`, written to a temporary file: the model and the
    /// file's bytes.
    func threeRecordsUpTo(_ count: Int, seed: UInt64) throws -> (fixture: FixtureKeychain, bytes: [UInt8]) {
        let temporary = NSTemporaryDirectory() + "/kcf-fixture-\(UUID().uuidString).kcf"
        defer {
            try? FileManager.default.removeItem(atPath: temporary)
            try? FileManager.default.removeItem(atPath: temporary + ".lock")
        }
        let fixture = try FixtureKeychain(
            path: temporary, credential: Self.passwordCredential, credentialJSON: Self.passwordJSON, seed: seed, formatVersion: formatVersion)
        for index in 0..<count {
            var item = GenericPassword(service: "svc", account: "user\(index)", password: "password \(index)")
            item.comment = "record \(index + 1)"
            try fixture.add(item)
        }
        return (fixture, Array(try Data(contentsOf: URL(fileURLWithPath: temporary))))
    }
}
