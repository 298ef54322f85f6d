import Testing
@testable import KeychainCrypto

@Suite("SymmetricKey")
struct SymmetricKeyTests {
    @Test("Sizes, bytes and constant-time equality")
    func basics() {
        #expect(SymmetricKey(size: .bits128).bitCount == 128)
        #expect(SymmetricKey(size: .bits192).bitCount == 192)
        #expect(SymmetricKey(size: .bits256).bitCount == 256)
        #expect(SymmetricKey(size: SymmetricKeySize(bitCount: 512)).bitCount == 512)
        let bytes = (0..<32).map { UInt8($0) }
        let key = SymmetricKey(data: bytes)
        #expect(key.withUnsafeBytes { Array($0) } == bytes)
        #expect(key == SymmetricKey(data: bytes))
        #expect(key != SymmetricKey(data: bytes.dropLast()))
        var changed = bytes
        changed[31] ^= 0x80
        #expect(key != SymmetricKey(data: changed))
        #expect(SymmetricKey(data: [UInt8]()).bitCount == 0)
        // Sizes that are not whole bytes round down, as in CryptoKit, instead of stopping the process.
        #expect(SymmetricKey(size: SymmetricKeySize(bitCount: 135)).bitCount == 128)
        #expect(SymmetricKey(size: SymmetricKeySize(bitCount: -8)).bitCount == 0)
    }

    @Test("Random keys differ; a seeded generator gives reproducible keys")
    func randomness() {
        let a = SymmetricKey(size: .bits256), b = SymmetricKey(size: .bits256)
        #expect(a != b)
        var g1 = SeededGenerator(seed: 42), g2 = SeededGenerator(seed: 42)
        #expect(SymmetricKey(size: .bits256, using: &g1) == SymmetricKey(size: .bits256, using: &g2))
        var g3 = SeededGenerator(seed: 43)
        var g4 = SeededGenerator(seed: 42)
        #expect(SymmetricKey(size: .bits256, using: &g3) != SymmetricKey(size: .bits256, using: &g4))
        // Odd sizes fill every byte.
        var g5 = SeededGenerator(seed: 7)
        let odd = SymmetricKey(size: SymmetricKeySize(bitCount: 8 * 13), using: &g5)
        #expect(odd.bitCount == 104)
    }
}

@Suite("Key storage")
struct KeyStorageTests {
    @Test("secureZero overwrites every byte")
    func zeroes() {
        var buffer = [UInt8](repeating: 0xa5, count: 77)
        buffer.withUnsafeMutableBytes { secureZero($0.baseAddress!, count: $0.count) }
        #expect(buffer == [UInt8](repeating: 0, count: 77))
    }

    @Test("One key shared by many concurrent tasks seals and opens consistently (expanded-key cache)")
    func concurrentUse() async throws {
        let key = SymmetricKey(data: (0..<32).map { UInt8($0 * 3) })
        let nonce = try AES.GCM.Nonce(data: [UInt8](repeating: 5, count: 12))
        let message = (0..<500).map { UInt8(truncatingIfNeeded: $0) }
        // Computed with a fresh key object, so the cache under test is not involved.
        let expected = try AES.GCM.seal(message, using: SymmetricKey(data: (0..<32).map { UInt8($0 * 3) }), nonce: nonce)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    var ok = true
                    for _ in 0..<50 {
                        let box = try AES.GCM.seal(message, using: key, nonce: nonce)
                        let opened = try AES.GCM.open(box, using: key)
                        ok = ok && box == expected && opened == message
                    }
                    return ok
                }
            }
            for try await ok in group { #expect(ok) }
        }
    }
}
