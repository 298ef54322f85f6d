import Foundation
import Testing
@testable import KeychainCrypto

@Suite("Argon2")
struct Argon2Tests {
    struct Vector: Decodable {
        let type: String; let t: Int; let m: Int; let p: Int; let taglen: Int
        let password: Hex; let salt: Hex; let secret: Hex; let ad: Hex; let tag: Hex
        let name: String?; let prehash: Hex?
    }

    struct VectorFile: Decodable { let cases: [Vector] }

    static func variant(_ name: String) -> Argon2Variant {
        switch name {
        case "argon2d": return .argon2d
        case "argon2i": return .argon2i
        default: return .argon2id
        }
    }

    /// Derives through the public entry point of the vector's variant.
    static func derive(_ v: Vector) throws -> [UInt8] {
        let secret = SymmetricKey(data: v.secret.bytes)
        let key: SymmetricKey
        switch v.type {
        case "argon2d":
            key = try KDF.Insecure.Argon2d.deriveKey(
                from: v.password.bytes, salt: v.salt.bytes, secret: secret, associatedData: v.ad.bytes,
                outputByteCount: v.taglen, iterations: v.t, memoryKiB: v.m, parallelism: v.p)
        case "argon2i":
            key = try KDF.Argon2i.deriveKey(
                from: v.password.bytes, salt: v.salt.bytes, secret: secret, associatedData: v.ad.bytes,
                outputByteCount: v.taglen, iterations: v.t, memoryKiB: v.m, parallelism: v.p)
        default:
            key = try KDF.Argon2id.deriveKey(
                from: v.password.bytes, salt: v.salt.bytes, secret: secret, associatedData: v.ad.bytes,
                outputByteCount: v.taglen, iterations: v.t, memoryKiB: v.m, parallelism: v.p)
        }
        return key.withUnsafeBytes { Array($0) }
    }

    static func argon2id(
        password: [UInt8] = [1], salt: [UInt8] = Array(repeating: 2, count: 16), outputByteCount: Int = 32,
        iterations: Int = 1, memoryKiB: Int = 8, parallelism: Int = 1
    ) throws -> SymmetricKey {
        try KDF.Argon2id.deriveKey(
            from: password, salt: salt, outputByteCount: outputByteCount, iterations: iterations,
            memoryKiB: memoryKiB, parallelism: parallelism)
    }

    @Test("RFC 9106 §5 test vectors: Argon2d, Argon2i and Argon2id (t = 3, m = 32 KiB, p = 4, secret and AD)")
    func rfc9106() throws {
        let file = try Fixtures.json(VectorFile.self, "argon2/rfc9106.json")
        #expect(file.cases.map(\.type) == ["argon2d", "argon2i", "argon2id"])
        for vector in file.cases {
            #expect(try Self.derive(vector) == vector.tag.bytes, "\(vector.name ?? "")")
        }
    }

    @Test("RFC 9106 §5 pre-hashing digests H0")
    func rfc9106Prehash() throws {
        let file = try Fixtures.json(VectorFile.self, "argon2/rfc9106.json")
        for v in file.cases {
            var h0 = [UInt8](repeating: 0, count: 64)
            v.password.bytes.withUnsafeBytes { password in
                v.salt.bytes.withUnsafeBytes { salt in
                    v.secret.bytes.withUnsafeBytes { secret in
                        v.ad.bytes.withUnsafeBytes { ad in
                            h0.withUnsafeMutableBytes { output in
                                KDF.Argon2.prehash(
                                    variant: Self.variant(v.type), password: password, salt: salt, secret: secret,
                                    associatedData: ad, outputByteCount: v.taglen, iterations: v.t, memoryKiB: v.m,
                                    parallelism: v.p, into: output.baseAddress!)
                            }
                        }
                    }
                }
            }
            #expect(h0 == v.prehash?.bytes, "\(v.name ?? "")")
        }
    }

    @Test("160 random cases against argon2-cffi: all three types, t 1–4, p 1–16, tags 4–1024 bytes, secrets and AD")
    func differential() throws {
        let file = try Fixtures.json(VectorFile.self, "argon2/argon2_cffi.json")
        #expect(file.cases.count == 160)
        for (index, vector) in file.cases.enumerated() {
            #expect(try Self.derive(vector) == vector.tag.bytes, "case \(index): \(vector.type) t=\(vector.t) m=\(vector.m) p=\(vector.p) T=\(vector.taglen)")
        }
    }

    @Test("The short form equals the full form with an empty secret and empty AD; input need not be contiguous")
    func entryPointsAgree() throws {
        let password = Array("correct horse battery staple".utf8)
        let salt = Array("saltsaltsalt".utf8)
        let short = try KDF.Argon2id.deriveKey(
            from: password, salt: salt, outputByteCount: 32, iterations: 2, memoryKiB: 64, parallelism: 2)
        let full = try KDF.Argon2id.deriveKey(
            from: NonContiguousBytes(bytes: password), salt: NonContiguousBytes(bytes: salt),
            secret: SymmetricKey(data: [UInt8]()), associatedData: [UInt8](),
            outputByteCount: 32, iterations: 2, memoryKiB: 64, parallelism: 2)
        #expect(short == full)
        let argon2i = try KDF.Argon2i.deriveKey(
            from: password, salt: salt, outputByteCount: 32, iterations: 2, memoryKiB: 64, parallelism: 2)
        #expect(short != argon2i)
    }

    @Test("Argon2id's first two slices read the same blocks for every password; the later ones do not")
    func dataIndependentAddressing() throws {
        // Two instances whose first blocks differ, as two passwords' would; record the reference block
        // of every block computed, slice by slice, in the first pass.
        func references(_ variant: Argon2Variant, seed: UInt64) throws -> [[Int]] {
            let memory = try Argon2Memory(blockCount: 4 * 2 * 64)
            defer { memory.deallocate() }
            var generator = SeededGenerator(seed: seed)
            for index in 0..<memory.blockCount * Argon2Memory.wordsPerBlock { memory.words[index] = generator.next() }
            let instance = Argon2Instance(memory: memory, variant: variant, lanes: 2, passes: 2)
            var slices: [[Int]] = []
            for pass in 0..<2 {
                for slice in 0..<Argon2Instance.sliceCount {
                    var seen: [Int] = []
                    for lane in 0..<2 { instance.fillSegment(pass: pass, slice: slice, lane: lane) { seen.append($0) } }
                    slices.append(seen)
                }
            }
            return slices
        }
        let id1 = try references(.argon2id, seed: 1), id2 = try references(.argon2id, seed: 2)
        #expect(id1[0] == id2[0] && id1[1] == id2[1])
        for slice in 2..<8 { #expect(id1[slice] != id2[slice], "slice \(slice)") }
        #expect(try references(.argon2i, seed: 1) == references(.argon2i, seed: 2))
        let d1 = try references(.argon2d, seed: 1), d2 = try references(.argon2d, seed: 2)
        for slice in 0..<8 { #expect(d1[slice] != d2[slice], "slice \(slice)") }
    }

    @Test("Out-of-range costs are invalidParameter, checked before any allocation")
    func hostileCosts() throws {
        let limits = KDF.Argon2.self
        for iterations in [0, -1, limits.maximumIterations + 1, Int.max, Int.min] {
            #expect(throws: CryptoKitError.invalidParameter, "t = \(iterations)") { try Self.argon2id(iterations: iterations) }
        }
        for parallelism in [0, -1, limits.maximumParallelism + 1, 1 << 24, Int.max] {
            #expect(throws: CryptoKitError.invalidParameter, "p = \(parallelism)") {
                try Self.argon2id(memoryKiB: 1024, parallelism: parallelism)
            }
        }
        for (memory, parallelism) in [(7, 1), (31, 4), (0, 1), (-8, 1), (limits.maximumMemoryKiB + 1, 1), (Int.max, 1),
                                      (Int.max, 16), (Int(UInt32.max) + 1, 1)] {
            #expect(throws: CryptoKitError.invalidParameter, "m = \(memory), p = \(parallelism)") {
                try Self.argon2id(memoryKiB: memory, parallelism: parallelism)
            }
        }
        // Each cost within its own limit, but together more work than maximumWorkKiB: refused at once.
        #expect(throws: CryptoKitError.invalidParameter) {
            try Self.argon2id(iterations: limits.maximumIterations, memoryKiB: limits.maximumMemoryKiB)
        }
        #expect(throws: CryptoKitError.invalidParameter) {
            try Self.argon2id(iterations: 17, memoryKiB: limits.maximumMemoryKiB)
        }
        #expect(throws: CryptoKitError.invalidParameter) {
            try Self.argon2id(iterations: limits.maximumWorkKiB / 64 + 1, memoryKiB: 64)
        }
    }

    @Test("Out-of-range lengths are incorrectParameterSize")
    func hostileLengths() throws {
        for length in [3, 0, -1, KDF.Argon2.maximumOutputByteCount + 1, Int.max] {
            #expect(throws: CryptoKitError.incorrectParameterSize, "T = \(length)") { try Self.argon2id(outputByteCount: length) }
        }
        for salt in [[], [UInt8](repeating: 1, count: 7)] {
            #expect(throws: CryptoKitError.incorrectParameterSize, "salt of \(salt.count)") { try Self.argon2id(salt: salt) }
        }
    }

    @Test("The smallest accepted values work: m = 8p, 4-byte tag, 8-byte salt, empty password; and the largest tag and p")
    func boundaries() throws {
        #expect(try Self.argon2id(password: [], salt: [UInt8](repeating: 9, count: 8), outputByteCount: 4).bitCount == 32)
        #expect(try Self.argon2id(memoryKiB: 8 * 16, parallelism: 16).bitCount == 256)
        #expect(try Self.argon2id(outputByteCount: KDF.Argon2.maximumOutputByteCount).bitCount == 8 * 1024)
        // m is rounded down to a multiple of 4p, but still hashed as given into H0.
        #expect(try Self.argon2id(memoryKiB: 12, parallelism: 1) != Self.argon2id(memoryKiB: 13, parallelism: 1))
    }
}
