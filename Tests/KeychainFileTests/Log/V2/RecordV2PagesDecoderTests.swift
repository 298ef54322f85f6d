import Foundation
import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// The replay's decoder of version 2 records, whose pages are opened on several threads
/// (``RecordV2PagesDecoder``), against the sequential ``RecordV2Decoder``: the same entries, and for a damaged
/// record the same first failure — offset and reason — wherever the damage lies among the shares.
@Suite("Format v2: a record's pages opened on several threads")
struct RecordV2PagesDecoderTests {
    /// Tunings that cut even a small record's pages into shares for two and four threads.
    static let parallelTunings = [
        ParallelTuning(workerCount: 2, minimumParallelEntries: 2, windowSize: 1 << 20),
        ParallelTuning(workerCount: 4, minimumParallelEntries: 2, windowSize: 1 << 20),
    ]

    /// A record of 4,000 entries (puts with secrets of up to 600 bytes, deletions, tombstones): about 40 pages.
    static func record() throws -> (bytes: [UInt8], entries: [EntryV2], keys: RecordKeysV2) {
        var random = SplitMix64(seed: 30)
        var entries = try RecordV2Tests.entries(4_000, seed: 7)
        // Some large secrets, so that secret boxes are a good part of the record's bytes too.
        for index in stride(from: 1, to: entries.count, by: 97) {
            entries[index] = try RecordV2Tests.put(index, secretLength: 600, using: &random)
        }
        let keys = try RecordV2Tests.keys()
        let sealed = try RecordV2Encoder.encode(
            entries, kind: .commit, sequence: 1, part: 0, previousChain: RecordV2Tests.c0, keys: keys, using: &random)
        return (sealed.bytes, entries, keys)
    }

    /// The `.corrupted` error's offset and reason, `nil` for success, a description for any other error.
    static func failure(_ decode: () throws(KeychainError) -> Void) -> String? {
        do {
            try decode()
            return nil
        } catch .corrupted(let offset, let reason) {
            return "corrupted at \(offset): \(reason)"
        } catch {
            return "\(error)"
        }
    }

    @Test("A record opened on several threads gives the sequential decoder's entries, with their digests")
    func sameEntries() throws {
        let (bytes, _, keys) = try Self.record()
        let sequential = try RecordV2Decoder.decode(bytes, at: 0, previousChain: RecordV2Tests.c0, keys: keys)
        #expect(try RecordV2Decoder.scan(bytes, at: 0).pages.count >= 32, "enough pages for several shares")
        for tuning in Self.parallelTunings + [.sequential] {
            let record = try RecordV2PagesDecoder.decode(bytes, at: 0, previousChain: RecordV2Tests.c0, keys: keys, tuning: tuning)
            #expect(record.kind == sequential.kind && record.sequence == sequential.sequence && record.part == sequential.part)
            #expect(record.chain == sequential.chain && record.end == sequential.end)
            var entries = record.entries.makeIterator()
            var digests = record.digests.makeIterator()
            var times = record.deletionTimes.makeIterator()
            for expected in sequential.entries {
                switch expected {
                case .put(let id, let attributes, let box):
                    guard case .put(let gotID, let gotAttributes, let secret)? = entries.next(), let digest = digests.next() else {
                        Issue.record("a put missing")
                        return
                    }
                    #expect(gotID == id && gotAttributes == attributes)
                    #expect(Array(secret.box) == Array(bytes[box]) && !secret.hasChain)
                    #expect(digest == ItemDigests(id: id, attributes: attributes))
                case .delete(let id, let time):
                    guard case .delete(let gotID)? = entries.next(), case .some(nil) = digests.next(), let gotTime = times.next() else {
                        Issue.record("a deletion missing")
                        return
                    }
                    #expect(gotID == id && gotTime == (id, time))
                case .tombstone(let id, let time):
                    let gotTime = times.next()
                    #expect(gotTime?.0 == id && gotTime?.1 == time)
                }
            }
            #expect(entries.next() == nil && digests.next() == nil && times.next() == nil)
        }
    }

    @Test("A damaged byte anywhere in a record is reported at the offset, and with the reason, the sequential decoder reports")
    func sameFirstFailure() throws {
        let (pristine, _, keys) = try Self.record()
        let pages = try RecordV2Decoder.scan(pristine, at: 0).pages
        // Every page's box and the secret boxes before it, at a few places each; the last page last.
        var places: [Int] = []
        for page in pages {
            places += [page.box.lowerBound + 3, page.box.upperBound - 1]
            if let secret = page.secrets.last { places.append(secret.lowerBound + 20) }
        }
        var compared = 0
        for place in places {
            var damaged = pristine
            damaged[place] ^= 0x41
            let expected = Self.failure { () throws(KeychainError) in
                _ = try RecordV2Decoder.decode(damaged, at: 0, previousChain: RecordV2Tests.c0, keys: keys)
            }
            #expect(expected != nil, "byte \(place) damaged")
            for tuning in Self.parallelTunings {
                let got = Self.failure { () throws(KeychainError) in
                    _ = try RecordV2PagesDecoder.decode(damaged, at: 0, previousChain: RecordV2Tests.c0, keys: keys, tuning: tuning)
                }
                #expect(got == expected, "byte \(place), \(tuning.workerCount) threads")
                compared += 1
            }
        }
        #expect(compared == places.count * Self.parallelTunings.count)
    }

    @Test("Of two damaged pages in different shares, the earlier is reported, whichever thread meets its damage first")
    func earlierOfTwoFailures() throws {
        let (pristine, _, keys) = try Self.record()
        let pages = try RecordV2Decoder.scan(pristine, at: 0).pages
        for (first, second) in [(2, pages.count - 1), (pages.count / 2, pages.count - 2), (0, pages.count / 3)] {
            var damaged = pristine
            damaged[pages[first].box.lowerBound + 40] ^= 1
            damaged[pages[second].box.lowerBound + 40] ^= 1
            for tuning in Self.parallelTunings {
                let got = Self.failure { () throws(KeychainError) in
                    _ = try RecordV2PagesDecoder.decode(damaged, at: 0, previousChain: RecordV2Tests.c0, keys: keys, tuning: tuning)
                }
                #expect(got?.hasPrefix("corrupted at \(pages[first].box.lowerBound):") == true, "pages \(first) and \(second): \(got ?? "none")")
            }
        }
    }
}
