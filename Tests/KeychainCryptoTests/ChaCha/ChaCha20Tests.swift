import Testing
import KeychainTestSupport
@testable import KeychainCrypto

@Suite("ChaCha20")
struct ChaCha20Tests {
    static let key = [UInt8](0..<32)

    @Test("RFC 8439 §2.3.2: the block function's test vector")
    func blockFunction() throws {
        let block = try ChaCha20.block(key: Self.key, counter: 1, nonce: try [UInt8](hexString: "000000090000004a00000000"))
        #expect(block.hexString == "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
            + "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")
    }

    @Test("RFC 8439 §2.4.2: encrypting the sunscreen text, whole and in pieces across block boundaries")
    func encryption() throws {
        let plaintext = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
        let expected = "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
            + "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab77937365af90bbf74a35be6b40b8eedf2785e42874d"
        let nonce = try [UInt8](hexString: "000000000000004a00000000")
        var whole = plaintext
        var cipher = try ChaCha20(key: Self.key, nonce: nonce, counter: 1)
        try cipher.apply(to: &whole)
        #expect(whole.hexString == expected)
        for split in [1, 13, 63, 64, 65] {
            var pieces = ChaCha20Tests.pieces(plaintext, split)
            var stream = try ChaCha20(key: Self.key, nonce: nonce, counter: 1)
            for index in pieces.indices { try stream.apply(to: &pieces[index]) }
            #expect(pieces.flatMap { $0 }.hexString == expected, "in pieces of \(split)")
        }
        var back = whole
        var decipher = try ChaCha20(key: Self.key, nonce: nonce, counter: 1)
        try decipher.apply(to: &back)
        #expect(back == plaintext)
    }

    @Test("RFC 8439 appendix A.1, test vector 1: the all-zero key and nonce at counter 0")
    func appendixZero() throws {
        var bytes = [UInt8](repeating: 0, count: 64)
        var cipher = try ChaCha20(key: [UInt8](repeating: 0, count: 32), nonce: [UInt8](repeating: 0, count: 12))
        try cipher.apply(to: &bytes)
        #expect(bytes.hexString == "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
            + "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586")
    }

    @Test("a key or nonce of another length is refused; the counter does not wrap")
    func refusals() throws {
        #expect(throws: CryptoKitError.incorrectKeySize) { try ChaCha20(key: [UInt8](repeating: 0, count: 16), nonce: [UInt8](repeating: 0, count: 12)) }
        #expect(throws: CryptoKitError.incorrectParameterSize) { try ChaCha20(key: Self.key, nonce: [UInt8](repeating: 0, count: 8)) }
        var last = try ChaCha20(key: Self.key, nonce: [UInt8](repeating: 0, count: 12), counter: UInt32.max)
        var block = [UInt8](repeating: 0, count: 64)
        try last.apply(to: &block)
        var more: [UInt8] = [0]
        #expect(throws: CryptoKitError.invalidParameter) { try last.apply(to: &more) }
    }

    static func pieces(_ bytes: [UInt8], _ size: Int) -> [[UInt8]] {
        stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min(bytes.count, $0 + size)]) }
    }
}
