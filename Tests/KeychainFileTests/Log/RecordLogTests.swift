import Foundation
import Testing
@testable import KeychainFile

/// Format version 1, whatever the default: the tests check version 1's record log: its header bytes, record frames and torn-tail rules (SPEC.md §4–§9).
@Suite("Record log: torn tails and damage")
struct RecordLogTests {
    /// A keychain with `count` single-item records.
    static func makeFile(_ directory: TemporaryDirectory, records count: Int) throws -> String {
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        for index in 0..<count {
            try keychain.add(GenericPassword(service: "s", account: "a\(index)", password: "p").attributes, secret: [UInt8(index)])
        }
        return keychain.path
    }

    @Test("A copy cut at every byte inside the last record opens with the records before it, and the next write repairs it")
    func tornTailAtEveryOffset() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeFile(directory, records: 3)
        let bytes = try fileBytes(path)
        let records = recordOffsets(of: bytes)
        #expect(records.count == 3)
        let last = records[2]
        for cut in last.lowerBound..<last.upperBound {
            let copy = directory.file("cut-\(cut).kcf")
            try writeFileBytes(Array(bytes[0..<cut]), to: copy)
            let keychain = try Keychain.open(at: copy, credential: TestKeychain.password)
            #expect(keychain.count == 2, "cut at \(cut)")
            #expect(keychain.head.sequence == 2)
            if cut > last.lowerBound {
                #expect(keychain.tornTail?.offset == last.lowerBound, "cut at \(cut)")
                #expect(keychain.tornTail?.byteCount == cut - last.lowerBound)
            } else {
                #expect(keychain.tornTail == nil)
            }
            if cut % 37 == 0 {
                try keychain.add(GenericPassword(service: "s", account: "after", password: "p").attributes, secret: [])
                let again = try Keychain.open(at: copy, credential: TestKeychain.password)
                #expect(again.tornTail == nil)
                #expect(again.count == 3)
            }
            try FileManager.default.removeItem(atPath: copy)
        }
    }

    @Test("Zero-filled space after the last record is a torn tail")
    func zeroTail() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeFile(directory, records: 2)
        try writeFileBytes(try fileBytes(path) + [UInt8](repeating: 0, count: 300), to: path)
        let keychain = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(keychain.count == 2)
        #expect(keychain.tornTail?.byteCount == 300)
    }

    @Test("Damage before the final record is corrupted, with its offset; never a silent change")
    func damageInTheMiddle() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeFile(directory, records: 3)
        let bytes = try fileBytes(path)
        let records = recordOffsets(of: bytes)
        let first = records[0]
        // Every bit of every byte of the first record.
        for offset in first {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[offset] ^= UInt8(1 << bit)
                try writeFileBytes(damaged, to: path)
                let outcome = Result { () throws(KeychainError) in try Keychain.open(at: path, credential: TestKeychain.password) }
                switch outcome {
                case .success:
                    Issue.record("a flip at byte \(offset) bit \(bit) went unnoticed")
                case .failure(.corrupted(let at, _)):
                    #expect(first.contains(at), "flip at \(offset) reported at \(at)")
                case .failure(let error):
                    Issue.record("flip at \(offset): \(error)")
                }
            }
        }
    }

    @Test("A removed, repeated or reordered record is corrupted")
    func structuralDamage() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeFile(directory, records: 3)
        let bytes = try fileBytes(path)
        let r = recordOffsets(of: bytes)
        let header = Array(bytes[0..<r[0].lowerBound])
        let cases: [(String, [UInt8])] = [
            ("removed", header + bytes[r[1]] + bytes[r[2]]),
            ("repeated", header + bytes[r[0]] + bytes[r[0]] + bytes[r[1]] + bytes[r[2]]),
            ("swapped", header + bytes[r[1]] + bytes[r[0]] + bytes[r[2]]),
        ]
        for (name, damaged) in cases {
            try writeFileBytes(damaged, to: path)
            #expect(throws: KeychainError.corrupted(offset: 0, reason: ""), "\(name)") {
                try Keychain.open(at: path, credential: TestKeychain.password)
            }
        }
    }

    @Test("A record spliced from another keychain with the same password is corrupted")
    func splice() throws {
        let first = TemporaryDirectory(), second = TemporaryDirectory()
        let pathA = try Self.makeFile(first, records: 3)
        let pathB = try Self.makeFile(second, records: 3)
        let a = try fileBytes(pathA), b = try fileBytes(pathB)
        let ra = recordOffsets(of: a), rb = recordOffsets(of: b)
        let spliced = Array(a[0..<ra[1].lowerBound]) + b[rb[1]] + a[ra[2]]
        try writeFileBytes(spliced, to: pathA)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try Keychain.open(at: pathA, credential: TestKeychain.password) }
    }

    @Test("Header damage: checksum, version, flags, truncation")
    func headerDamage() throws {
        let directory = TemporaryDirectory()
        let path = try Self.makeFile(directory, records: 1)
        let bytes = try fileBytes(path)
        var version = bytes
        version[9] = 2
        try writeFileBytes(version, to: path)
        #expect(throws: KeychainError.unsupportedVersion(2)) { try Keychain.open(at: path, credential: TestKeychain.password) }
        var epoch = bytes
        epoch[39] ^= 1
        try writeFileBytes(epoch, to: path)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try Keychain.open(at: path, credential: TestKeychain.password) }
        try writeFileBytes(Array(bytes[0..<100]), to: path)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try Keychain.open(at: path, credential: TestKeychain.password) }
        var flags = bytes
        flags[11] = 1
        try writeFileBytes(flags, to: path)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try Keychain.open(at: path, credential: TestKeychain.password) }
    }
}
