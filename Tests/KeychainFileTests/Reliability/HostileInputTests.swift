import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hostile headers and records: absurd KDF parameters, lengths that lie, giant counts and deep nesting are
/// refused with a typed error before any large allocation or long computation (SPEC.md §9.1 step 2, §11).
///
/// Each hostile header keeps a valid checksum, so it passes the damage check and reaches the parsing of its
/// fields. "Before any long computation" is bounded by time: every open must return within a second, where
/// running the KDF the file asks for would take minutes to hours. "Before any large allocation" is bounded
/// by the process's peak resident size, which must not grow by 256 MiB while the hostile files are opened —
/// the lengths they claim range from 256 MiB to 4 GiB.
/// Format version 1, whatever the default: the hostile fields are written at version 1's offsets (its header,
/// key slots, record frames and boxes).
@Suite("Reliability: hostile headers and records")
struct HostileInputTests {
    static let password = Credential.password("hostile input test")
    static let timeBound = 1.0

    /// A valid file with four slots — three password slots (1,000 rounds) then one raw-key slot — and two
    /// records, held in memory.
    static func baseFile() throws -> [UInt8] {
        let path = "/memory/base.kcf"
        let fileSystem = MemoryFileSystem()
        var options = TestKeychain.versionOneOptions
        options.additionalCredentials = [.password("second"), .password("third"), reliabilityRawKey]
        let keychain = try Keychain.createForTesting(at: path, credential: password, fileSystem: fileSystem, options: options)
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "one"))
        try keychain.add(GenericPassword(service: "svc", account: "b", password: "two"))
        return try fileSystem.contents(of: path)
    }

    static let slotOffsets = [76, 192, 308, 424]  // three 116-byte password slots, then the raw-key slot

    /// Writes `value` big-endian at `offset`.
    static func put<Value: FixedWidthInteger>(_ value: Value, at offset: Int, in bytes: inout [UInt8]) {
        let size = MemoryLayout<Value>.size
        for index in 0..<size { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * (size - 1 - index))) }
    }

    /// Recomputes the header checksum for a header of `length` bytes (SPEC.md §4), so that a hostile header
    /// passes the damage check.
    static func fixChecksum(_ bytes: inout [UInt8], headerLength length: Int) {
        let checksumOffset = length - 48
        guard checksumOffset > 0, length <= bytes.count else { return }
        let digest = Array(SHA256.hash(data: bytes[0..<checksumOffset]))
        bytes.replaceSubrange(checksumOffset..<(checksumOffset + 16), with: digest.prefix(16))
    }

    /// The process's peak resident set, in bytes.
    static func peakResidentBytes() -> Int {
        var usage = rusage()
        #if canImport(Darwin)
        getrusage(RUSAGE_SELF, &usage)
        return Int(usage.ru_maxrss)
        #else
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_maxrss) * 1024
        #endif
    }

    struct Case: CustomStringConvertible {
        let description: String
        let credential: Credential
        let make: ([UInt8]) -> [UInt8]
        /// Whether the hostile bytes may be dropped as a torn tail (a hostile final record, SPEC.md §9.2)
        /// rather than refused.
        var mayBeTornTail = false
    }

    static let headerLength = 584  // 76 + 3 × 116 + 112 + 48

    static func headerCase(_ description: String, credential: Credential = password, checksumLength: Int = headerLength,
                           _ change: @escaping (inout [UInt8]) -> Void) -> Case {
        Case(description: description, credential: credential) { base in
            var bytes = base
            change(&bytes)
            fixChecksum(&bytes, headerLength: checksumLength)
            return bytes
        }
    }

    static var headerCases: [Case] {
        let iterationsOffset = slotOffsets.map { $0 + 20 }
        return [
            headerCase("PBKDF2 iterations 4,000,000,000 in the slot the password opens") {
                put(UInt32(4_000_000_000), at: iterationsOffset[0], in: &$0)
            },
            headerCase("PBKDF2 iterations 4,294,967,295 in another slot") { put(UInt32.max, at: iterationsOffset[2], in: &$0) },
            headerCase("PBKDF2 iterations 0") { put(UInt32(0), at: iterationsOffset[0], in: &$0) },
            headerCase("three slots of 10,000,000 iterations: 30,000,000, over the per-header total") {
                for offset in iterationsOffset.prefix(3) { put(UInt32(10_000_000), at: offset, in: &$0) }
            },
            headerCase("over the per-header total, opened with the raw key (no password slot tried)", credential: reliabilityRawKey) {
                for offset in iterationsOffset.prefix(3) { put(UInt32(10_000_000), at: offset, in: &$0) }
            },
            headerCase("a password slot whose length says 65,535") { put(UInt16.max, at: slotOffsets[0] + 2, in: &$0) },
            headerCase("a password slot whose length says 112 (a raw-key slot's)") { put(UInt16(112), at: slotOffsets[1] + 2, in: &$0) },
            headerCase("a raw-key slot whose length says 116") { put(UInt16(116), at: slotOffsets[3] + 2, in: &$0) },
            headerCase("an unknown slot type 255") { $0[slotOffsets[2]] = 255 },
            headerCase("a slot's reserved byte set") { $0[slotOffsets[0] + 1] = 1 },
            headerCase("slot count 0") { $0[72] = 0 },
            headerCase("slot count 255") { $0[72] = 255 },
            headerCase("slot count 5 with four slots' bytes") { $0[72] = 5 },
            headerCase("slot count 3 with four slots' bytes") { $0[72] = 3 },
            headerCase("reserved header bytes set") { $0[74] = 0x80 },
            headerCase("header flags set") { put(UInt16(0x8000), at: 10, in: &$0) },
            headerCase("header length 4,294,967,295") { put(UInt32.max, at: 12, in: &$0) },
            headerCase("header length 1,981 (one byte over the limit)", checksumLength: 1_981) { put(UInt32(1_981), at: 12, in: &$0) },
            headerCase("header length 235 (under the minimum)") { put(UInt32(235), at: 12, in: &$0) },
            headerCase("header length 1,980 (the limit) over a 584-byte header", checksumLength: 1_980) {
                put(UInt32(1_980), at: 12, in: &$0)
            },
            headerCase("header length 424, cutting the raw-key slot off", checksumLength: 424) { put(UInt32(424), at: 12, in: &$0) },
            headerCase("header length 644, 60 bytes more than its slots", checksumLength: 644) { put(UInt32(644), at: 12, in: &$0) },
            Case(description: "a header longer than the file", credential: password) { base in
                var bytes = Array(base.prefix(500))
                put(UInt32(1_980), at: 12, in: &bytes)
                return bytes
            },
        ]
    }

    /// Frames appended after the two valid records: hostile lengths and counts in clear, no key needed.
    static func frame(length: UInt32, check: UInt32? = nil, kind: UInt8 = 1, sequence: UInt64 = 3, payload: [UInt8]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 17)
        put(length, at: 0, in: &bytes)
        put(check ?? (length ^ 0xFFFF_FFFF), at: 4, in: &bytes)
        bytes[8] = kind
        put(sequence, at: 9, in: &bytes)
        return bytes + payload
    }

    static func be32(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] }

    static var recordCases: [Case] {
        let transaction16M = frame(length: 9 + 4 + 1, kind: 3, payload: be32(16_777_216) + [1])
        let giantBox = frame(length: 9 + 4 + 28, payload: be32(0xFFFF_FFF0) + [UInt8](repeating: 0xAB, count: 28))
        let boxOverFrame = frame(length: 9 + 4 + 28, payload: be32(1_000) + [UInt8](repeating: 0xAB, count: 28))
        let maximal = frame(length: 268_435_456, payload: [UInt8](repeating: 0, count: 64))
        var cases: [Case] = []
        // A frame that claims to run past the end of the file is a torn tail whatever follows it (SPEC.md §9.2
        // step 3: what follows lies inside the frame it claims).
        func add(_ description: String, _ hostile: [UInt8], tornWhenFinal: Bool, tornWhenFollowed: Bool = false) {
            cases.append(Case(description: description + ", as the final record", credential: password, make: { $0 + hostile },
                              mayBeTornTail: tornWhenFinal))
            cases.append(Case(description: description + ", followed by another record", credential: password,
                              make: { $0 + hostile + frame(length: 57, kind: 2, sequence: 4, payload: [UInt8](repeating: 0, count: 48)) },
                              mayBeTornTail: tornWhenFollowed))
        }
        add("frame length 4,294,967,295 with a matching check", frame(length: .max, payload: []), tornWhenFinal: false)
        add("frame length 268,435,457", frame(length: 268_435_457, payload: []), tornWhenFinal: false)
        add("frame length 268,435,456 (the limit) in a short file tail", maximal, tornWhenFinal: true, tornWhenFollowed: true)
        add("a transaction of 16,777,216 entries in a 14-byte body", transaction16M, tornWhenFinal: true)
        add("a box length of 4,294,967,280 in a 41-byte body", giantBox, tornWhenFinal: true)
        add("a box length of 1,000 in a 41-byte body", boxOverFrame, tornWhenFinal: true)
        add("frame length 2 (under the minimum of 9)", frame(length: 2, payload: []), tornWhenFinal: false)
        return cases
    }

    /// Opens every case, expecting a typed error (or, where allowed, a torn tail) within the time bound.
    static func run(_ cases: [Case], base: [UInt8]) throws -> [String] {
        var lines: [String] = []
        for hostile in cases {
            let bytes = hostile.make(base)
            let (outcome, seconds) = measure { () -> Result<Keychain, KeychainError> in
                Result { () throws(KeychainError) -> Keychain in try Keychain.openInMemory(bytes, credential: hostile.credential) }
            }
            #expect(seconds < timeBound, "\(hostile): took \(seconds) s")
            switch outcome {
            case .success(let keychain):
                if hostile.mayBeTornTail, let tail = keychain.tornTail, tail.offset == base.count, keychain.count == 2 {
                    lines.append("\(hostile): torn tail of \(tail.byteCount) bytes (\(String(format: "%.3f", seconds)) s)")
                } else {
                    Issue.record("\(hostile): opened (\(keychain.count) items, torn tail \(String(describing: keychain.tornTail)))")
                }
            case .failure(let error):
                switch error {
                case .corrupted, .notAKeychain, .wrongCredentials:
                    lines.append("\(hostile): \(error) (\(String(format: "%.3f", seconds)) s)")
                default:
                    Issue.record("\(hostile): unexpected \(error)")
                }
            }
        }
        return lines
    }

    @Test("Hostile headers with valid checksums are refused quickly, before any KDF runs")
    func hostileHeaders() throws {
        let base = try Self.baseFile()
        #expect(base.count > Self.headerLength)
        #expect(try Keychain.openInMemory(base, credential: Self.password).count == 2, "the base file is valid")
        #expect(try Keychain.openInMemory(base, credential: reliabilityRawKey).count == 2)
        let before = Self.peakResidentBytes()
        let lines = try Self.run(Self.headerCases, base: base)
        let growth = Self.peakResidentBytes() - before
        #expect(growth < 256 << 20, "peak resident size grew by \(growth) bytes")
        print("hostile headers: \(Self.headerCases.count) cases, peak RSS growth \(growth >> 10) KiB\n  " + lines.joined(separator: "\n  "))
    }

    @Test("Hostile frame lengths, entry counts and box lengths are refused (or, as the final record, dropped) without large allocations")
    func hostileRecords() throws {
        let base = try Self.baseFile()
        let before = Self.peakResidentBytes()
        let lines = try Self.run(Self.recordCases, base: base)
        let growth = Self.peakResidentBytes() - before
        #expect(growth < 256 << 20, "peak resident size grew by \(growth) bytes")
        print("hostile records: \(Self.recordCases.count) cases, peak RSS growth \(growth >> 10) KiB\n  " + lines.joined(separator: "\n  "))
    }

    /// A record sealed with the file's own key (someone holding the key, or a buggy writer) whose attributes
    /// plaintext lies: it authenticates, so it is never a torn tail (SPEC.md §9.2 step 5), only `corrupted`.
    @Test("Attribute counts and lengths that lie inside an authentic record are corrupted, even in the final record")
    func lyingAttributes() throws {
        let base = try Self.baseFile()
        let replayer = try TamperingTests.Replayer(base, headerLength: Self.headerLength, credential: reliabilityRawKey)
        let keychain = try Keychain.openInMemory(base, credential: reliabilityRawKey)
        let head = keychain.head
        let id = try ItemID(bytes: [UInt8](repeating: 0x42, count: 16))
        let prefix: [UInt8] = [1] + id.bytes + [ItemClass.genericPassword.rawValue]
        let plaintexts: [(String, [UInt8])] = [
            ("attribute count 65,535", prefix + [0xFF, 0xFF]),
            ("attribute count 0", prefix + [0, 0]),
            ("a string length of 4,294,967,295", prefix + [0, 2] + [0x00, 0x04, 1] + Self.be32(.max) + Array("label".utf8)),
            ("a string length of 65,536", prefix + [0, 2] + [0x00, 0x04, 1] + Self.be32(65_536) + [UInt8](repeating: 0x41, count: 65_536)),
            ("an integer of length 1,000", prefix + [0, 2] + [0x00, 0x02, 3] + Self.be32(1_000) + [UInt8](repeating: 0, count: 1_000)),
            ("a count of 3 with two attributes", prefix + [0, 3] + [0x00, 0x04, 1] + Self.be32(1) + [0x41] + [0x00, 0x05, 5] + Self.be32(8) + [UInt8](repeating: 0, count: 8)),
        ]
        for (description, plaintext) in plaintexts {
            var payload: [UInt8] = []
            let aad = BoxAAD.make(
                fileID: replayer.context.fileID, epoch: replayer.context.epoch, sequence: head.sequence + 1, kind: .put,
                entryCount: 1, entryIndex: 0, role: .attributes, itemID: nil, previousChain: head.chainValue)
            let box = try AES.GCM.seal(plaintext, using: replayer.context.recordKey, authenticating: aad)
            let attributesBox = Array(box.nonce) + box.ciphertext + box.tag
            let secretAAD = BoxAAD.make(
                fileID: replayer.context.fileID, epoch: replayer.context.epoch, sequence: head.sequence + 1, kind: .put,
                entryCount: 1, entryIndex: 0, role: .secret, itemID: id, previousChain: box.tag)
            let secret = try AES.GCM.seal([UInt8](), using: replayer.context.recordKey, authenticating: secretAAD)
            let secretBox = Array(secret.nonce) + secret.ciphertext + secret.tag
            payload = Self.be32(UInt32(attributesBox.count)) + attributesBox + Self.be32(UInt32(secretBox.count)) + secretBox
            let record = Self.frame(length: UInt32(9 + payload.count), sequence: head.sequence + 1, payload: payload)
            let (outcome, seconds) = measure { () -> Result<Keychain, KeychainError> in
                Result { () throws(KeychainError) -> Keychain in try Keychain.openInMemory(base + record, credential: reliabilityRawKey) }
            }
            #expect(seconds < Self.timeBound)
            switch outcome {
            case .failure(.corrupted(let offset, let reason)):
                #expect(offset >= base.count, "\(description): \(offset)")
                print("hostile attributes: \(description): corrupted at \(offset): \(reason)")
            default:
                Issue.record("\(description): \(outcome)")
            }
        }
    }

    /// DER nested far deeper than any certificate: the reader stops at 32 levels (DERReader.maximumDepth)
    /// with a typed error, without recursing once per level. The keychain never parses the DER it stores,
    /// so the same bytes as a certificate item's secret open, search and read back unchanged.
    @Test("Deeply nested DER is refused when parsed and inert when stored")
    func deepDER() throws {
        // 100,000 SEQUENCEs, each holding the next, around a NULL: lengths from the inside out, then the
        // headers from the outside in.
        let levels = 100_000
        func lengthBytes(_ length: Int) -> [UInt8] {
            if length < 0x80 { return [UInt8(length)] }
            let significant = (0..<4).reversed().map { UInt8(truncatingIfNeeded: length >> (8 * $0)) }.drop { $0 == 0 }
            return [0x80 | UInt8(significant.count)] + significant
        }
        var contentLengths = [2]  // contentLengths[k]: the content length of the k-th SEQUENCE from the inside
        for _ in 0..<levels { contentLengths.append(contentLengths.last! + 1 + lengthBytes(contentLengths.last!).count) }
        var der: [UInt8] = []
        der.reserveCapacity(contentLengths.last!)
        for level in stride(from: levels - 1, through: 0, by: -1) { der += [0x30] + lengthBytes(contentLengths[level]) }
        der += [0x05, 0x00]
        #expect(der.count == contentLengths.last!)
        let (outcome, seconds) = measure { () -> Result<Certificate, KeychainError> in
            Result { () throws(KeychainError) -> Certificate in try Certificate(der: der) }
        }
        #expect(seconds < Self.timeBound)
        guard case .failure(.invalidParameter(let reason)) = outcome else {
            Issue.record("nested DER gave \(outcome)")
            return
        }
        #expect(reason.contains("deeper than 32"), "\(reason)")

        // Stored as a certificate item's secret: inert.
        let keychain = try Keychain.inMemory()
        let attributes = try ItemAttributes(itemClass: .certificate, values: [.label: .string("nested"), .publicKeyHash: .bytes([1, 2, 3])])
        try keychain.add(attributes, secret: der)
        let found = try keychain.search(Query(.certificate, returning: [.data]))
        #expect(found.first?.value == der)
        #expect(throws: KeychainError.itemNotFound) { try keychain.search(.identity()) }
        print("hostile DER: \(der.count) bytes, \(levels) nested SEQUENCEs: refused in \(String(format: "%.3f", seconds)) s (\(reason))")
    }
}
