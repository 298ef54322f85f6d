import Foundation
import Testing
@testable import KeychainFile

/// Every single-bit flip of every byte of the small conformance fixtures is detected: a typed error, or —
/// only when the flip lies in the final record — that record dropped as a torn tail (the limitation of
/// SPEC.md §13). Never a silent change of an item.
///
/// A flip in the header is opened through ``Keychain`` on a memory file system, as an application would. A
/// flip after the header leaves the header, and so the keys it yields, unchanged: those copies are replayed
/// (SPEC.md §9.2) with the keys derived once per fixture, which skips a PBKDF2 per flip; a sample of them is
/// also opened through ``Keychain`` and must be classified the same way.
@Suite("Reliability: tampering")
struct TamperingTests {
    static let sizeLimit = 8 * 1024

    /// The fixtures the sweep covers: at most 8 KiB, and opening (the manifest's outcome). Fixtures whose
    /// manifest already expects an error (bit-flip-…, record-…, wrong-password, …) are damaged copies of valid
    /// files; flipping their bits again would mostly test the damage they already have.
    static let swept: [String] = FixtureManifest.names.filter { name in
        guard let manifest = try? FixtureManifest(name) else { return true }  // reported by the test
        return manifest.outcome == "opens" && manifest.bytes.count <= sizeLimit
    }

    /// The live items after a replay: attributes and the sealed secret box (equal boxes under one key hold
    /// equal secrets).
    struct ReplayedState: Equatable {
        var items: [ItemID: Pair]
        struct Pair: Equatable {
            let attributes: ItemAttributes
            let secretBox: [UInt8]
        }

        init(_ index: ItemIndex) {
            items = index.itemsByID.mapValues { Pair(attributes: $0.attributes, secretBox: Array($0.secret.box)) }
        }
    }

    /// What opening a flipped copy gave.
    enum Outcome {
        case failed(KeychainError)
        case opened(ReplayedState, tornTail: TornTail?, sequence: UInt64)
    }

    /// The keys of one fixture, derived once, and a replay of any bytes that keep its header.
    struct Replayer {
        let headerBytes: [UInt8]
        let context: RecordContext

        init(_ bytes: [UInt8], headerLength: Int, credential: Credential) throws {
            headerBytes = Array(bytes[0..<headerLength])
            let header = try FileHeader.parse(headerBytes)
            let masterKey = try #require(try RecordLog.unlock(header, with: credential))
            let keys = try EpochKeys(masterKey: masterKey, fileID: header.fileID, epoch: header.epoch, epochSalt: header.epochSalt)
            #expect(FileHeader.verifyMAC(headerBytes, headerKey: keys.header))
            context = RecordContext(fileID: header.fileID, epoch: header.epoch, recordKey: keys.record)
        }

        func replay(_ bytes: [UInt8]) -> Outcome {
            let file = MemoryFile(inode: 1)
            file.bytes = bytes
            var replay = Replay(
                file: MemoryFileHandle(file: file, path: "/memory/flipped.kcf"), fileSize: bytes.count, start: headerBytes.count,
                context: context, initialChain: FileHeader.initialChainValue(of: headerBytes))
            do throws(KeychainError) {
                try replay.run()
            } catch {
                return .failed(error)
            }
            return .opened(ReplayedState(replay.index), tornTail: replay.tornTail, sequence: replay.head.sequence)
        }
    }

    /// The opened state of `bytes` through the public API, in the replay's terms.
    static func openThroughKeychain(_ bytes: [UInt8], credential: Credential) -> Outcome {
        do throws(KeychainError) {
            let keychain = try Keychain.openInMemory(bytes, credential: credential)
            var items: [ItemID: ReplayedState.Pair] = [:]
            for (id, item) in keychain.index.itemsByID {
                items[id] = ReplayedState.Pair(attributes: item.attributes, secretBox: Array(item.secret.box))
            }
            var state = ReplayedState(ItemIndex())
            state.items = items
            return .opened(state, tornTail: keychain.tornTail, sequence: keychain.head.sequence)
        } catch {
            return .failed(error)
        }
    }

    /// The verdict on one flip; `nil` when it is acceptable, else what went wrong.
    struct Classifier {
        let baseline: ReplayedState
        let baselineSequence: UInt64
        let baselineTail: TornTail?
        /// The state before the final whole record, and where that record starts (nil: no records).
        let beforeFinal: ReplayedState
        let finalStart: Int?

        /// The outcome's category for the counts, or a failure.
        func classify(_ outcome: Outcome, flipAt offset: Int) -> Result<String, Failure> {
            switch outcome {
            case .failed(let error):
                switch error {
                case .corrupted: return .success("corrupted")
                case .notAKeychain: return .success("notAKeychain")
                case .unsupportedVersion: return .success("unsupportedVersion")
                case .wrongCredentials: return .success("wrongCredentials")
                default: return .failure(Failure("flip at \(offset): unexpected error \(error)"))
                }
            case .opened(let state, let tornTail, let sequence):
                // Nothing shows the final record was never acknowledged (no lock file): when it ends the file it is
                // set aside as a tail that may hold acknowledged data, which no write cuts off (SPEC.md §9.3).
                if let finalStart, offset >= finalStart, let tornTail, state == beforeFinal, sequence == baselineSequence - 1,
                   tornTail.mayHoldAcknowledgedData || baselineTail != nil {
                    return .success("final record dropped as torn tail")
                }
                if let baselineTail, offset >= baselineTail.offset {
                    // A flip in bytes the baseline already ignores.
                    if tornTail != nil, state == baseline, sequence == baselineSequence {
                        return .success("flip in the ignored torn tail: still ignored")
                    }
                    // The fixture whose final record was torn by a flipped length: flipping it back makes the
                    // record whole again, and it verifies — written by the key's holder, not forged.
                    if tornTail == nil, sequence == baselineSequence + 1, offset < baselineTail.offset + Format.frameHeaderSize,
                       baseline.items.allSatisfy({ state.items[$0.key] != nil }) {
                        return .success("flip restores the torn record")
                    }
                }
                if state == baseline && sequence == baselineSequence {
                    return .failure(Failure("flip at \(offset) went unnoticed (opened with the same items)"))
                }
                return .failure(Failure("flip at \(offset): SILENT CHANGE — opened with \(state.items.count) items, sequence \(sequence), torn tail \(String(describing: tornTail))"))
            }
        }
    }

    struct Failure: Error {
        let text: String
        init(_ text: String) { self.text = text }
    }

    @Test("The swept fixtures are the small valid ones")
    func sweptFixtures() throws {
        for name in FixtureManifest.names { _ = try FixtureManifest(name) }
        #expect(Self.swept.count >= 15)
        #expect(!Self.swept.contains("thousand-items"))
        print("tampering: sweeping \(Self.swept.count) fixtures: \(Self.swept.joined(separator: ", "))")
        let skipped = FixtureManifest.names.filter { !Self.swept.contains($0) }
        print("tampering: skipped (baseline is an error, or larger than 8 KiB): \(skipped.joined(separator: ", "))")
    }

    @Test("Every single-bit flip of a small valid fixture is detected", arguments: swept)
    func everyBitFlip(name: String) throws {
        let fixture = try FixtureManifest(name)
        let bytes = fixture.bytes
        let headerLength = try #require(fixture.headerLength)
        let replayer = try Replayer(bytes, headerLength: headerLength, credential: fixture.credential)

        // The baseline: the unflipped file, through the replay and through the API, matches the manifest.
        guard case .opened(let baseline, let baselineTail, let baselineSequence) = replayer.replay(bytes) else {
            Issue.record("\(name) does not replay")
            return
        }
        let opened = try Keychain.openInMemory(bytes, credential: fixture.credential)
        #expect(try KeychainSnapshot(opened) == fixture.expected, "\(name) opens as its manifest says")
        #expect(baselineSequence == fixture.expectedSequence)
        #expect(baselineTail?.offset == fixture.expectedTornTail?.offset)
        let end = baselineTail?.offset ?? bytes.count
        let records = recordOffsets(of: Array(bytes[0..<end]))
        #expect(records.count == Int(baselineSequence), "\(name): the clear frame lengths give the records")
        let finalStart = records.last?.lowerBound
        var beforeFinal = baseline
        if let finalStart {
            guard case .opened(let state, nil, _) = replayer.replay(Array(bytes[0..<finalStart])) else {
                Issue.record("\(name) cut before its final record does not replay cleanly")
                return
            }
            beforeFinal = state
        }
        let classifier = Classifier(
            baseline: baseline, baselineSequence: baselineSequence, baselineTail: baselineTail, beforeFinal: beforeFinal,
            finalStart: finalStart)

        var counts: [String: Int] = [:]
        var failures: [String] = []
        var crossChecked = 0
        var flipped = bytes
        for offset in 0..<bytes.count {
            for bit in 0..<8 {
                flipped[offset] ^= UInt8(1) << bit
                defer { flipped[offset] ^= UInt8(1) << bit }
                let outcome = offset < headerLength
                    ? Self.openThroughKeychain(flipped, credential: fixture.credential)
                    : replayer.replay(flipped)
                switch classifier.classify(outcome, flipAt: offset) {
                case .success(let category):
                    counts[category, default: 0] += 1
                    // Every 61st flip after the header is also opened through the API (61: prime, so the
                    // sample moves across bit positions and record fields).
                    if offset >= headerLength && (offset * 8 + bit) % 61 == 0 {
                        crossChecked += 1
                        let throughAPI = Self.openThroughKeychain(flipped, credential: fixture.credential)
                        if case .success(let again) = classifier.classify(throughAPI, flipAt: offset), again == category {} else {
                            failures.append("flip at \(offset) bit \(bit): \(category) by replay, \(throughAPI) through Keychain.open")
                        }
                    }
                case .failure(let failure):
                    failures.append("\(failure.text) (bit \(bit))")
                }
            }
        }
        for failure in failures.prefix(10) { Issue.record("\(name): \(failure)") }
        #expect(failures.count == 0, "\(name): flips not detected")
        #expect(counts.values.reduce(0, +) + failures.count == bytes.count * 8)
        let summary = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print("tampering: \(name) (\(bytes.count) bytes, final record at \(finalStart.map(String.init) ?? "-")): \(bytes.count * 8) flips: \(summary); \(failures.count) undetected; \(crossChecked) cross-checked through Keychain.open")
    }
}
