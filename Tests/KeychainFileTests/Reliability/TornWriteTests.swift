import Foundation
import Testing
@testable import KeychainFile

/// A log of many records of every kind, and a copy of it cut at every byte offset: each copy opens with
/// exactly the records before the cut (SPEC.md §9.2), reporting what it ignored as a torn tail.
/// Format version 1, whatever the default: the cuts are checked against version 1's rules for torn tails and
/// its header's length; version 2's parity mends short cuts (SPEC.md §25.5).
@Suite("Reliability: torn writes")
struct TornWriteTests {
    /// A keychain log written through the API, with the file's size and the keychain's content after the
    /// creation and after each committed operation.
    struct WrittenLog {
        var bytes: [UInt8] = []
        /// `boundaries[k]` is the file size after k records (k = 0: the header alone).
        var boundaries: [Int] = []
        /// `states[k]`: what the keychain held after k records.
        var states: [KeychainSnapshot] = []
    }

    /// Puts, updates of attributes and of secrets, deletes, transactions mixing all three, a transaction of
    /// deletes only, items of every class and one with a 2 KiB secret.
    static func writeLog() throws -> WrittenLog {
        let path = "/memory/torn.kcf"
        let fileSystem = MemoryFileSystem()
        let keychain = try Keychain.createForTesting(
            at: path, credential: reliabilityRawKey, fileSystem: fileSystem, options: TestKeychain.versionOneOptions)
        var log = WrittenLog()
        // The secrets the operations leave, kept by the test itself: each state read back from the keychain
        // is checked against it before it is used as the expectation for the cut copies.
        var model: [ItemID: [UInt8]] = [:]
        func committed() throws {
            let state = try KeychainSnapshot(keychain)
            #expect(state.items.mapValues(\.secret) == model, "after record \(log.states.count)")
            log.boundaries.append(try fileSystem.contents(of: path).count)
            log.states.append(state)
        }
        func secret(_ index: Int, size: Int = 12) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) } }
        try committed()

        var references: [PersistentReference] = []
        for (variant, itemClass) in [ItemClass.genericPassword, .internetPassword, .certificate, .key, .genericPassword, .internetPassword].enumerated() {
            let value = secret(variant)
            let reference = try keychain.add(try fullAttributes(of: itemClass, variant: variant), secret: value)
            references.append(reference)
            model[reference.itemID] = value
            try committed()
        }
        let large = secret(99, size: 2048)
        let largeReference = try keychain.add(try fullAttributes(of: .genericPassword, variant: 50), secret: large)
        model[largeReference.itemID] = large
        try committed()

        func query(_ reference: PersistentReference) throws -> Query {
            let itemClass = try #require(try KeychainSnapshot(keychain).items[reference.itemID]?.attributes.itemClass)
            return Query(queryClass(itemClass), synchronizable: .any, persistentReference: reference)
        }
        // An update of attributes only, then of the secret.
        try keychain.update(try query(references[0]), setting: [.label: .string("relabelled")])
        try committed()
        try keychain.update(try query(references[1]), setting: [:], secret: secret(200))
        model[references[1].itemID] = secret(200)
        try committed()
        // A single delete.
        try keychain.delete(try query(references[2]))
        model.removeValue(forKey: references[2].itemID)
        try committed()
        // A transaction: two puts, an update, a delete.
        let queries = (try query(references[3]), try query(references[4]))
        let added = try keychain.batch { (batch) throws(KeychainError) -> [PersistentReference] in
            let first = try batch.add(try fullAttributes(of: .key, variant: 7), secret: secret(7))
            let second = try batch.add(try fullAttributes(of: .certificate, variant: 8), secret: secret(8))
            try batch.update(queries.0, setting: [.label: .string("changed in a batch")], secret: secret(300))
            try batch.delete(queries.1)
            return [first, second]
        }
        model[added[0].itemID] = secret(7)
        model[added[1].itemID] = secret(8)
        model[references[3].itemID] = secret(300)
        model.removeValue(forKey: references[4].itemID)
        try committed()
        // The large secret replaced by another large one, then a transaction of deletes only.
        try keychain.update(try query(largeReference), setting: [:], secret: secret(98, size: 1536))
        model[largeReference.itemID] = secret(98, size: 1536)
        try committed()
        let deletions = (try query(references[5]), try query(added[0]))
        try keychain.batch { (batch) throws(KeychainError) in
            try batch.delete(deletions.0)
            try batch.delete(deletions.1)
        }
        model.removeValue(forKey: references[5].itemID)
        model.removeValue(forKey: added[0].itemID)
        try committed()
        for variant in 60..<64 {
            let reference = try keychain.add(try fullAttributes(of: .genericPassword, variant: variant), secret: secret(variant))
            model[reference.itemID] = secret(variant)
            try committed()
        }
        log.bytes = try fileSystem.contents(of: path)
        return log
    }

    @Test("A copy cut at every byte offset opens with exactly the whole records before the cut")
    func everyOffset() throws {
        let log = try Self.writeLog()
        let headerLength = log.boundaries[0]
        #expect(log.boundaries.count == 18, "17 records and the header")
        #expect(log.boundaries == log.boundaries.sorted() && Set(log.boundaries).count == log.boundaries.count)
        #expect(log.boundaries.last == log.bytes.count)

        var mismatches = 0
        var tornCuts = 0
        let (_, seconds) = try measure { () throws in
            for cut in headerLength...log.bytes.count {
                let records = log.boundaries.lastIndex { $0 <= cut }!
                let keychain = try Keychain.openInMemory(Array(log.bytes[0..<cut]), credential: reliabilityRawKey)
                let whole = log.boundaries[records]
                let expectedTail = cut > whole ? TornTail(offset: whole, byteCount: cut - whole, reason: "") : nil
                var good = keychain.head.sequence == UInt64(records)
                good = good && keychain.tornTail?.offset == expectedTail?.offset
                good = good && keychain.tornTail?.byteCount == expectedTail?.byteCount
                let state = try KeychainSnapshot(keychain)
                good = good && state == log.states[records]
                if !good {
                    mismatches += 1
                    if mismatches <= 5 {
                        Issue.record("cut at \(cut): head \(keychain.head.sequence), torn tail \(String(describing: keychain.tornTail)), expected \(records) records")
                    }
                }
                if expectedTail != nil { tornCuts += 1 }
            }
        }
        #expect(mismatches == 0)
        let offsets = log.bytes.count - headerLength + 1
        print("torn writes: \(offsets) cut offsets (\(headerLength) … \(log.bytes.count)) over \(log.boundaries.count - 1) records, \(tornCuts) mid-record; \(mismatches) mismatches; \(String(format: "%.1f", seconds)) s")
    }

    @Test("A copy cut inside the header is refused with a typed error")
    func cutsInsideTheHeader() throws {
        let log = try Self.writeLog()
        let headerLength = log.boundaries[0]
        var outcomes: [String: Int] = [:]
        for cut in 0..<headerLength {
            do throws(KeychainError) {
                _ = try Keychain.openInMemory(Array(log.bytes[0..<cut]), credential: reliabilityRawKey)
                Issue.record("a copy cut at \(cut), inside the header, opened")
            } catch {
                switch error {
                case .notAKeychain where cut < FileHeader.Prefix.size: outcomes["notAKeychain", default: 0] += 1
                case .corrupted(let offset, _) where cut >= FileHeader.Prefix.size && offset == 0:
                    outcomes["corrupted (truncated header)", default: 0] += 1
                default: Issue.record("a copy cut at \(cut) gave \(error)")
                }
            }
        }
        #expect(outcomes.values.reduce(0, +) == headerLength)
        print("torn writes: \(headerLength) cuts inside the header: \(outcomes)")
    }
}

/// The query class that finds items of `itemClass`.
func queryClass(_ itemClass: ItemClass) -> QueryClass {
    switch itemClass {
    case .genericPassword: return .genericPassword
    case .internetPassword: return .internetPassword
    case .certificate: return .certificate
    case .key: return .key
    }
}
