import Foundation
import Testing
@testable import KeychainFile

/// The BER re-encoding of PKCS #12 input: DER passes unchanged, the BER forms that Java keytool and macOS write
/// become DER, hostile input is a typed error within bounds, and the DER reader elsewhere stays strict.
@Suite("PKCS #12 BER input")
struct PKCS12BERDecoderTests {
    func der(_ bytes: [UInt8]) throws(PKCS12Error) -> [UInt8] { try PKCS12BERDecoder.der(bytes, "the input", context: nil) }

    @Test("every DER fixture comes out byte for byte the same",
          arguments: ["ec-few-rounds.p12", "rsa-best-available.p12", "ec-unencrypted.p12", "ec-openssl-legacy.p12", "kcf-export.p12"])
    func derUnchanged(name: String) throws {
        let bytes = try TestFixtures.bytes("pkcs12/" + name)
        #expect(try der(bytes) == bytes)
    }

    @Test("indefinite lengths, constructed OCTET STRINGs (nested) and long-form lengths become DER")
    func berForms() throws {
        // SEQUENCE (indefinite) { OCTET STRING constructed { 04 01 aa, 24 80 { 04 02 bb cc } 00 00 }, INTEGER 5 }
        let input: [UInt8] = [0x30, 0x80, 0x24, 0x80, 0x04, 0x01, 0xaa, 0x24, 0x80, 0x04, 0x02, 0xbb, 0xcc, 0x00, 0x00, 0x00, 0x00,
                              0x02, 0x81, 0x01, 0x05, 0x00, 0x00]
        #expect(try der(input) == [0x30, 0x08, 0x04, 0x03, 0xaa, 0xbb, 0xcc, 0x02, 0x01, 0x05])
        // A definite constructed OCTET STRING, a zero-padded long length, an empty indefinite SEQUENCE.
        #expect(try der([0x24, 0x82, 0x00, 0x05, 0x04, 0x03, 1, 2, 3]) == [0x04, 0x03, 1, 2, 3])
        #expect(try der([0x30, 0x80, 0x00, 0x00]) == [0x30, 0x00])
        // A long element: the DER length is in long form.
        let long = [UInt8](repeating: 7, count: 300)
        #expect(try der([0x24, 0x80, 0x04, 0x82, 0x01, 0x2c] + long + [0x00, 0x00]) == [0x04, 0x82, 0x01, 0x2c] + long)
    }

    @Test("malformed and hostile input is a typed error at the right place",
          arguments: [
            ([], 0), ([0x30], 1), ([0x30, 0x80], 2), ([0x30, 0x80, 0x00], 2), ([0x30, 0x80, 0x00, 0x01], 2),
            ([0x04, 0x80, 0x00, 0x00], 1), ([0x24, 0x80, 0x02, 0x01, 0x01, 0x00, 0x00], 0), ([0x30, 0x85, 1, 0, 0, 0, 0], 1),
            ([0x30, 0x84, 0xff, 0xff, 0xff, 0xff], 1), ([0x30, 0x03, 0x02, 0x01], 1), ([0x1f, 0x01, 0x00], 0),
            ([0x00, 0x00], 0), ([0x30, 0x00, 0x00], 2), ([0x30, 0x02, 0x00, 0x00], 2), ([0x30, 0x03, 0x04, 0x80, 0x00], 3),
          ] as [([UInt8], Int)])
    func malformed(input: [UInt8], offset: Int) {
        do {
            _ = try der(input)
            Issue.record("accepted \(input)")
        } catch {
            guard case .malformed(let at, _) = error else { Issue.record("\(error)"); return }
            #expect(at == offset, "\(input): \(error)")
        }
    }

    @Test("nesting is bounded: 32 levels read, 33 refused, 100,000 refused without exhausting the stack")
    func depth() throws {
        func nested(_ levels: Int) -> [UInt8] {
            Array(repeating: [0x30, 0x80], count: levels).flatMap { $0 } + Array(repeating: 0, count: 2 * levels)
        }
        #expect(try der(nested(32)).count == 64)
        #expect(throws: PKCS12Error.self) { try der(nested(33)) }
        #expect(throws: PKCS12Error.self) { try der(nested(100_000)) }
    }

    @Test("random bytes and random BER-like structures never crash")
    func random() {
        var random = TestRandom(seed: 2268)
        let alphabet: [UInt8] = [0x00, 0x04, 0x24, 0x30, 0x80, 0x81, 0x82, 0xa0, 0x02, 0x01, 0x03, 0xff]
        for round in 0..<20_000 {
            let count = Int(random.next() % 40)
            let bytes = (0..<count).map { _ in
                round % 2 == 0 ? alphabet[Int(random.next() % UInt64(alphabet.count))] : UInt8(truncatingIfNeeded: random.next())
            }
            if let output = try? der(bytes) {
                // Whatever is accepted comes out as DER that the strict reader takes whole.
                var reader = DERReader(output)
                #expect(throws: Never.self) {
                    let element = try reader.readElement("element")
                    try reader.validateTree(of: element)
                    try reader.expectEnd("the output")
                }
            }
        }
    }

    @Test("elsewhere DER stays strict: the DER reader and certificates refuse indefinite lengths")
    func strictElsewhere() throws {
        var reader = DERReader([0x30, 0x80, 0x00, 0x00])
        #expect(throws: DERError.self) { try reader.readElement("SEQUENCE") }
        let certificate = try TestFixtures.bytes("certificates/ec-p256-leaf-v3-no-ski.der")
        // The same certificate with its outer SEQUENCE given an indefinite length.
        var header = 2
        if certificate[1] & 0x80 != 0 { header += Int(certificate[1] & 0x7f) }
        let indefinite = [0x30, 0x80] + certificate[header...] + [0x00, 0x00]
        #expect(try der(Array(indefinite)) == certificate)
        #expect(throws: (any Error).self) { try CertificateFields(der: Array(indefinite)) }
    }
}
