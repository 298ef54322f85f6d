import Testing
import KeychainTestSupport
@testable import KeychainCrypto

@Suite("SHA-512")
struct SHA512Tests {
    @Test("FIPS 180-4 examples: \"abc\", the empty message, the 112-byte two-block message, one million 'a'")
    func fipsExamples() throws {
        #expect(SHA512.hash(data: Array("abc".utf8)).hexString
            == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
        #expect(SHA512.hash(data: [UInt8]()).hexString
            == "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e")
        let twoBlock = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
        #expect(SHA512.hash(data: Array(twoBlock.utf8)).hexString
            == "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909")
        var hasher = SHA512()
        let thousand = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { hasher.update(data: thousand) }
        #expect(hasher.finalize().hexString
            == "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b")
    }

    /// Lengths around the padding boundaries (111/112 bytes: the length fits or spills into another block), with
    /// digests from Python's hashlib of bytes i mod 251.
    @Test("lengths around the block and padding boundaries, whole and fed in pieces, match hashlib", arguments: [
        (111, "a1a111449b198d9b1f538bad7f3fc1022b3a5b1a5e90a0bc860de8512746cbc31599e6c834de3a3235327af0b51ff57bf7acf1974a73014d9c3953812edc7c8d"),
        (112, "c5fbd731d19d2ae1180f001be72c2c1aaba1d7b094b3748880e24593b8e117a750e11c1bd867cc2f96dace8c8b74abd2d5c4f236be444e77d30d1916174070b9"),
        (127, "eab89674feaa34e27aebeeff3c0a4d70070bb872d5e9f186cf1dbbdee517b6e35724d629ff025a5b07185e911ada7e3c8acf830aa0e4f71777bd2d44f504f7f0"),
        (128, "1dffd5e3adb71d45d2245939665521ae001a317a03720a45732ba1900ca3b8351fc5c9b4ca513eba6f80bc7b1d1fdad4abd13491cb824d61b08d8c0e1561b3f7"),
        (129, "1d9da57fbbdab09afb3506ab2d223d06109d65c1c8ad197f50138f714bc4c3f2fe5787922639c680acad1c651f955990425954ce2cba0c5cc83f2667d878eb0f"),
        (239, "cb4c7fd522756d5781ad3a4f590a1d862906b960e7720136cb3fb36b563caa1ea5689134291fa79c80ccc2b4092b41df32ebdcb36dbe79db483440228c1622a8"),
        (240, "6c48466c9f6c07e4ab762c696b7eeb35cfe236fca73683e5fab873ac3489b4d2eb3d7afcce7e8165dbbf37aded3b5b0c889c0b7e0f1790a8330d8677429d91a5"),
    ])
    func boundaries(length: Int, digest: String) {
        let message = (0..<length).map { UInt8($0 % 251) }
        #expect(SHA512.hash(data: message).hexString == digest)
        for split in [1, 7, 64, 127] where split < length {
            var hasher = SHA512()
            var offset = 0
            while offset < length {
                hasher.update(data: message[offset..<min(length, offset + split)])
                offset += split
            }
            #expect(hasher.finalize().hexString == digest, "fed \(split) bytes at a time")
        }
    }
}
