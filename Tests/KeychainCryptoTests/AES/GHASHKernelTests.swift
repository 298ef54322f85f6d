import Testing
@testable import KeychainCrypto

/// The two GHASH kernels: runs of blocks go through the pair kernel (two blocks a vector, `pmuludq`), single
/// multiplications through the scalar one. The GCM vectors (NIST, Wycheproof, OpenSSL) check both through whole
/// messages; these check the pair kernel's every group shape against the scalar multiply, block by block.
@Suite("GHASH kernels")
struct GHASHKernelTests {
    /// Y after absorbing `blocks` from `start` one block at a time with the scalar multiply: Y ← (Y ⊕ X)·H.
    static func blockByBlock(_ start: (high: UInt64, low: UInt64), _ blocks: [UInt8], key: GHASHKey) -> (high: UInt64, low: UInt64) {
        var state = start
        blocks.withUnsafeBytes { raw in
            for offset in stride(from: 0, to: raw.count, by: 16) {
                state = GHASHKey.multiply(
                    state.high ^ raw.baseAddress!.loadBigEndianUInt64(at: offset),
                    state.low ^ raw.baseAddress!.loadBigEndianUInt64(at: offset + 8), key.h1)
            }
        }
        return state
    }

    static func key(_ subkey: [UInt8]) -> GHASHKey {
        subkey.withUnsafeBytes { GHASHKey(hashSubkey: $0.baseAddress!) }
    }

    @Test("GCM test case 2 (McGrew and Viega): GHASH(H, {}, C) = f38cbb1ad69223dcc3457ae5b6b0f885")
    func publishedHash() throws {
        let key = Self.key(try Array(hex: "66e94bd4ef8a2c3b884cfa59ca342b2e"))
        defer { key.wipeAndDeallocate() }
        let ciphertext = try Array(hex: "0388dace60b6a392f328c2b971b2fe78")
        var hash = GHASH()
        ciphertext.withUnsafeBytes { hash.update(bytes: $0.baseAddress!, count: 16, key: key) }
        hash.updateLengths(authenticatedByteCount: 0, ciphertextByteCount: 16, key: key)
        #expect(hash.high == 0xf38c_bb1a_d692_23dc && hash.low == 0xc345_7ae5_b6b0_f885)
    }

    @Test("The pair kernel gives the block-by-block result for 0 … 40 blocks, any start, extreme keys and data")
    func pairKernelAgreesWithScalarMultiply() {
        var random = SeededGenerator(seed: 0x6748_4153_48)
        var mismatches = 0
        for trial in 0..<20_000 {
            var subkey = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            // Keys and data with every bit set put the most partial products on one position of a class.
            if trial % 10 == 0 { subkey = [UInt8](repeating: 0xff, count: 16) }
            if trial % 13 == 0 { subkey = [UInt8](repeating: 0, count: 16); subkey[trial % 16] = 0x80 >> (trial % 8) }
            let key = Self.key(subkey)
            defer { key.wipeAndDeallocate() }
            let blockCount = trial % 41
            var blocks = (0..<(16 * blockCount)).map { _ in UInt8.random(in: 0...255, using: &random) }
            if trial % 7 == 0 { blocks = [UInt8](repeating: 0xff, count: blocks.count) }
            let start = trial % 3 == 0 ? (high: UInt64(0), low: UInt64(0)) : (high: random.next(), low: random.next())
            var hash = GHASH(high: start.high, low: start.low)
            blocks.withUnsafeBytes { raw in
                if let base = raw.baseAddress { hash.update(blocks: base, count: blockCount, key: key) }
            }
            let expected = Self.blockByBlock(start, blocks, key: key)
            if hash.high != expected.high || hash.low != expected.low {
                mismatches += 1
                if mismatches <= 5 { Issue.record("trial \(trial): \(blockCount) blocks, key \(subkey.hex)") }
            }
        }
        #expect(mismatches == 0)
    }
}
