import Foundation
import Testing
@testable import KeychainFile

/// The expected fields of a certificate fixture, computed by Python's `cryptography` (see
/// Fixtures/certificates/generate.py).
struct CertificateExpectation: Decodable {
    let description: String
    let version: Int
    let serial_content_octets: String
    let subject_der: String
    let issuer_der: String
    let subject_key_identifier: String?
    let public_key_bits: String
    let public_key_hash: String
}

private let fixtureNames = [
    "rsa2048-ca-v3-ski", "ec-p256-leaf-v3-no-ski", "ec-p384-v3-long-serial-custom-ski",
    "ec-p256-v3-serial-leading-zero", "rsa2048-v1",
]

private func fixture(_ name: String) throws -> (der: [UInt8], expected: CertificateExpectation) {
    (try TestFixtures.bytes("certificates/\(name).der"),
     try TestFixtures.json(CertificateExpectation.self, "certificates/\(name).json"))
}

// MARK: A small DER builder for hand-made (unsigned) certificates

private func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
    let n = content.count
    if n < 0x80 { return [tag, UInt8(n)] + content }
    if n < 0x100 { return [tag, 0x81, UInt8(n)] + content }
    return [tag, 0x82, UInt8(n >> 8), UInt8(n & 0xff)] + content
}

private func sequence(_ parts: [UInt8]...) -> [UInt8] { tlv(0x30, parts.flatMap { $0 }) }

private func commonName(_ text: String) -> [UInt8] {
    sequence(tlv(0x31, sequence(tlv(0x06, [0x55, 0x04, 0x03]), tlv(0x0c, Array(text.utf8)))))
}

private func subjectKeyIdentifierExtension(_ identifier: [UInt8], critical: Bool = false) -> [UInt8] {
    sequence(tlv(0x06, [0x55, 0x1d, 0x0e]), critical ? tlv(0x01, [0xff]) : [], tlv(0x04, tlv(0x04, identifier)))
}

/// An X.509 structure with placeholder algorithm identifiers and signature: the reader checks structure,
/// not signatures, so each field can be broken on its own.
private struct HandMadeCertificate {
    var version: [UInt8] = tlv(0xa0, tlv(0x02, [0x02]))
    var serial: [UInt8] = tlv(0x02, [0x01])
    var issuer: [UInt8] = commonName("Issuer")
    var subject: [UInt8] = commonName("Subject")
    var publicKey: [UInt8] = tlv(0x03, [0x00, 0x04, 0x01, 0x02])
    var uniqueIDs: [UInt8] = []
    var extensions: [UInt8] = []
    var tbsTail: [UInt8] = []
    var signature: [UInt8] = tlv(0x03, [0x00, 0xaa])

    var der: [UInt8] {
        let algorithm = sequence(tlv(0x06, [0x2a, 0x03]))
        let validity = sequence(tlv(0x17, Array("260101000000Z".utf8)), tlv(0x17, Array("360101000000Z".utf8)))
        let tbs = sequence(version, serial, algorithm, issuer, validity, subject, sequence(algorithm, publicKey),
                           uniqueIDs, extensions, tbsTail)
        return sequence(tbs, algorithm, signature)
    }
}

private func extensionsField(_ list: [UInt8]...) -> [UInt8] { tlv(0xa3, sequence(list.flatMap { $0 })) }

/// Expects `.invalidParameter("certificate: … at byte <offset>")` mentioning `fragment`.
private func expectRejected(
    _ der: [UInt8], _ fragment: String, atByte offset: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    let text = expectInvalidParameter("certificate: ", fragment, sourceLocation: sourceLocation) {
        _ = try CertificateFields(der: der)
    }
    if let offset, let text {
        #expect(text.hasSuffix("at byte \(offset)"), "\(text)", sourceLocation: sourceLocation)
    }
}

@Suite("Certificates: DER fields against OpenSSL")
struct CertificateTests {
    @Test("Fields read from real certificates equal those computed by Python's cryptography", arguments: fixtureNames)
    func fields(name: String) throws {
        let (der, expected) = try fixture(name)
        let fields = try CertificateFields(der: der)
        #expect(fields.version == expected.version)
        #expect(fields.serialNumber == (try hex(expected.serial_content_octets)))
        #expect(fields.subject == (try hex(expected.subject_der)))
        #expect(fields.issuer == (try hex(expected.issuer_der)))
        #expect(fields.subjectKeyIdentifier == (try expected.subject_key_identifier.map(hex)))
        #expect(fields.subjectPublicKeyBits == (try hex(expected.public_key_bits)))
        #expect(fields.publicKeyHash == (try hex(expected.public_key_hash)))
    }

    @Test("Certificate(der:) fills the attributes of SPEC.md §8.2 from the DER", arguments: fixtureNames)
    func certificateItem(name: String) throws {
        let (der, expected) = try fixture(name)
        let item = try Certificate(der: der, label: "L", accessGroup: "g", synchronizable: true)
        #expect(item.certificateType == Int64(expected.version))
        #expect(item.certificateEncoding == 3)
        #expect(item.der == der)
        #expect(item.label == "L" && item.accessGroup == "g" && item.synchronizable)
        let attributes = try item.attributes
        #expect(attributes[.certificateType] == .integer(Int64(expected.version)))
        #expect(attributes[.certificateEncoding] == .integer(3))
        #expect(attributes[.issuer] == .bytes(try hex(expected.issuer_der)))
        #expect(attributes[.subject] == .bytes(try hex(expected.subject_der)))
        #expect(attributes[.serialNumber] == .bytes(try hex(expected.serial_content_octets)))
        #expect(attributes[.publicKeyHash] == .bytes(try hex(expected.public_key_hash)))
        #expect(attributes[.subjectKeyID] == (try expected.subject_key_identifier.map { .bytes(try hex($0)) }))
        #expect(try Certificate(attributes: attributes, value: der) == item)
    }

    @Test("The fixtures cover what they are named for")
    func fixtureCoverage() throws {
        let expectations = try fixtureNames.map { try fixture($0).expected }
        #expect(expectations.contains { $0.version == 1 })
        #expect(expectations.contains { $0.version == 3 && $0.subject_key_identifier == nil })
        #expect(expectations.contains { $0.subject_key_identifier != nil })
        #expect(expectations.contains { $0.serial_content_octets.hasPrefix("00") })
        #expect(expectations.contains { $0.serial_content_octets.count == 40 })
        #expect(expectations.contains { $0.issuer_der != $0.subject_der })
    }

    @Test("A hand-made version 2 certificate with both unique IDs, and a critical SKI in version 3")
    func handMade() throws {
        var v2 = HandMadeCertificate()
        v2.version = tlv(0xa0, tlv(0x02, [0x01]))
        v2.uniqueIDs = tlv(0x81, [0x00, 0x01]) + tlv(0x82, [0x00, 0x02])
        let fields = try CertificateFields(der: v2.der)
        #expect(fields.version == 2)
        #expect(fields.serialNumber == [0x01])
        #expect(fields.issuer == commonName("Issuer"))
        #expect(fields.subject == commonName("Subject"))
        #expect(fields.subjectPublicKeyBits == [0x04, 0x01, 0x02])
        #expect(fields.subjectKeyIdentifier == nil)
        // SHA-1 of 04 01 02, from Python's hashlib.sha1(bytes([4, 1, 2])).
        #expect(fields.publicKeyHash == (try hex("66ab843d140c8aee3deeef3a2acfb50e4fd15805")))

        var v3 = HandMadeCertificate()
        v3.extensions = extensionsField(
            sequence(tlv(0x06, [0x55, 0x1d, 0x13]), tlv(0x04, sequence())),  // basic constraints, before the SKI
            subjectKeyIdentifierExtension([0xde, 0xad], critical: true))
        #expect(try CertificateFields(der: v3.der).subjectKeyIdentifier == [0xde, 0xad])
        #expect(try CertificateFields(der: v3.der).version == 3)
    }
}

@Suite("Certificates: malformed DER is refused, never trapped on")
struct MalformedCertificateTests {
    private let der: [UInt8]

    init() throws {
        der = try TestFixtures.bytes("certificates/rsa2048-ca-v3-ski.der")
        // 30 82 03 58: a SEQUENCE of 856 bytes with a two-byte long-form length.
        guard Array(der.prefix(4)) == [0x30, 0x82, 0x03, 0x58], der.count == 860 else {
            throw TestSupportError.unexpectedFixture("rsa2048-ca-v3-ski.der")
        }
    }

    @Test("Every truncation of a real certificate is refused")
    func truncated() {
        for length in 0..<der.count {
            #expect(throws: KeychainError.invalidParameter("")) { try CertificateFields(der: Array(der.prefix(length))) }
        }
        expectRejected([], "Certificate SEQUENCE missing", atByte: 0)
        expectRejected(Array(der.prefix(1)), "truncated length", atByte: 1)
        expectRejected(Array(der.prefix(3)), "truncated length", atByte: 1)
        expectRejected(Array(der.prefix(500)), "beyond the end", atByte: 1)
    }

    @Test("Wrong outer tag")
    func wrongOuterTag() {
        var set = der
        set[0] = 0x31  // a SET instead of a SEQUENCE
        expectRejected(set, "expected Certificate SEQUENCE (tag 0x30), found tag 0x31", atByte: 0)
    }

    @Test("Long-form length with a leading zero byte")
    func leadingZeroLength() {
        // 30 83 00 03 58: the same length in three bytes.
        let padded = [0x30, 0x83, 0x00, 0x03, 0x58] + der.dropFirst(4)
        expectRejected(padded, "leading zero", atByte: 1)
    }

    @Test("Long-form length for a value the short form can hold")
    func nonMinimalLongForm() {
        // A SEQUENCE of 5 bytes with its length written 81 05 (DER requires 05).
        expectRejected([0x30, 0x81, 0x05, 0x04, 0x03, 0x01, 0x02, 0x03], "not minimal", atByte: 1)
    }

    @Test("More than four length bytes")
    func tooManyLengthBytes() {
        let long = [0x30, 0x85, 0x00, 0x00, 0x00, 0x03, 0x58] + der.dropFirst(4)
        expectRejected(long, "5 length bytes", atByte: 1)
    }

    @Test("Indefinite length")
    func indefiniteLength() {
        let indefinite = [0x30, 0x80] + der.dropFirst(4) + [0x00, 0x00]
        expectRejected(indefinite, "indefinite length", atByte: 1)
    }

    @Test("Length beyond the end of the input")
    func lengthBeyondEnd() {
        var longer = der
        longer[3] = 0x59  // 857 bytes claimed, 856 present
        expectRejected(longer, "beyond the end", atByte: 1)
        // A four-byte length of 16 MiB is read, then refused for the same reason.
        expectRejected([0x30, 0x84, 0x01, 0x00, 0x00, 0x00, 0x00], "length 16777216 beyond the end", atByte: 1)
        // An inner element that claims more than its parent holds.
        var inner = der
        (inner[6], inner[7]) = (0x03, 0x55)  // tbsCertificate claims 0x0355 bytes; after its header 0x0354 remain
        expectRejected(inner, "length 853 beyond the end (852 bytes remain)", atByte: 5)
    }

    @Test("Nesting deeper than 32 levels")
    func excessiveNesting() {
        func nested(_ depth: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            for _ in 0..<depth { bytes = tlv(0x30, bytes) }
            return bytes
        }
        expectRejected(nested(40), "nesting deeper than 32")
        expectRejected(nested(33), "nesting deeper than 32", atByte: 64)
        // 32 levels are structurally fine: the reader gets past the tree check and takes the first nested
        // SEQUENCE as tbsCertificate, then finds no signatureAlgorithm after it.
        expectRejected(nested(32), "signatureAlgorithm SEQUENCE missing", atByte: 64)
        // Nesting hidden inside the issuer Name of an otherwise valid certificate.
        var deep = HandMadeCertificate()
        deep.issuer = nested(40)
        expectRejected(deep.der, "nesting deeper than 32")
    }

    @Test("Trailing bytes after the certificate")
    func trailingGarbage() {
        expectRejected(der + [0x00], "1 trailing bytes after the certificate", atByte: 860)
        expectRejected(der + der, "860 trailing bytes", atByte: 860)
    }

    @Test("Multi-byte tags")
    func highTagNumber() {
        // Tag 0x1F announces a tag number in the following bytes; certificates never need one.
        expectRejected([0x30, 0x04, 0x1f, 0x81, 0x01, 0x00], "multi-byte tag 0x1f", atByte: 2)
    }

    @Test("Structural errors inside tbsCertificate, each at its field")
    func structure() {
        var v1WithExtensions = HandMadeCertificate()
        v1WithExtensions.version = []
        v1WithExtensions.extensions = extensionsField(subjectKeyIdentifierExtension([1]))
        expectRejected(v1WithExtensions.der, "extensions in a version 1 certificate")

        var v2WithExtensions = HandMadeCertificate()
        v2WithExtensions.version = tlv(0xa0, tlv(0x02, [0x01]))
        v2WithExtensions.extensions = extensionsField(subjectKeyIdentifierExtension([1]))
        expectRejected(v2WithExtensions.der, "extensions in a version 2 certificate")

        var v1WithUniqueID = HandMadeCertificate()
        v1WithUniqueID.version = []
        v1WithUniqueID.uniqueIDs = tlv(0x81, [0x00])
        expectRejected(v1WithUniqueID.der, "issuerUniqueID in a version 1 certificate")

        var version4 = HandMadeCertificate()
        version4.version = tlv(0xa0, tlv(0x02, [0x03]))
        expectRejected(version4.der, "unsupported version", atByte: 6)

        var longVersion = HandMadeCertificate()
        longVersion.version = tlv(0xa0, tlv(0x02, [0x00, 0x02]))
        expectRejected(longVersion.der, "unsupported version")

        var emptySerial = HandMadeCertificate()
        emptySerial.serial = tlv(0x02, [])
        expectRejected(emptySerial.der, "empty serialNumber")

        var serialAsOctets = HandMadeCertificate()
        serialAsOctets.serial = tlv(0x04, [0x01])
        expectRejected(serialAsOctets.der, "expected serialNumber INTEGER (tag 0x02), found tag 0x04")

        var unusedBits = HandMadeCertificate()
        unusedBits.publicKey = tlv(0x03, [0x03, 0x04, 0x01, 0x02])
        expectRejected(unusedBits.der, "3 unused bits")

        var emptyKey = HandMadeCertificate()
        emptyKey.publicKey = tlv(0x03, [])
        expectRejected(emptyKey.der, "empty subjectPublicKey")

        var twoIdentifiers = HandMadeCertificate()
        twoIdentifiers.extensions = extensionsField(subjectKeyIdentifierExtension([1]), subjectKeyIdentifierExtension([2]))
        expectRejected(twoIdentifiers.der, "second subject key identifier")

        var emptyExtensions = HandMadeCertificate()
        emptyExtensions.extensions = extensionsField()
        expectRejected(emptyExtensions.der, "empty Extensions")

        var identifierNotOctets = HandMadeCertificate()
        identifierNotOctets.extensions = extensionsField(
            sequence(tlv(0x06, [0x55, 0x1d, 0x0e]), tlv(0x04, tlv(0x02, [0x01]))))
        expectRejected(identifierNotOctets.der, "expected subject key identifier OCTET STRING")

        var identifierTrailing = HandMadeCertificate()
        identifierTrailing.extensions = extensionsField(
            sequence(tlv(0x06, [0x55, 0x1d, 0x0e]), tlv(0x04, tlv(0x04, [0x01]) + [0x00])))
        expectRejected(identifierTrailing.der, "unexpected bytes at the end of subject key identifier extnValue")

        var identifierGarbage = HandMadeCertificate()
        identifierGarbage.extensions = extensionsField(
            sequence(tlv(0x06, [0x55, 0x1d, 0x0e]), tlv(0x04, [0x04, 0x09, 0x01])))
        expectRejected(identifierGarbage.der, "beyond the end")

        var extraField = HandMadeCertificate()
        extraField.tbsTail = tlv(0x05, [])
        expectRejected(extraField.der, "unexpected bytes at the end of tbsCertificate")

        var noSignature = HandMadeCertificate()
        noSignature.signature = []
        expectRejected(noSignature.der, "signatureValue BIT STRING missing")

        var extraSignature = HandMadeCertificate()
        extraSignature.signature = tlv(0x03, [0x00]) + tlv(0x03, [0x00])
        expectRejected(extraSignature.der, "unexpected bytes at the end of the certificate")
    }

    @Test("Random corruption of real certificates never traps; every failure is invalidParameter",
          arguments: fixtureNames)
    func randomCorruption(name: String) throws {
        let original = try TestFixtures.bytes("certificates/\(name).der")
        var generator = TestRandom(seed: UInt64(original.count))
        var rejected = 0
        for _ in 0..<2_000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            do {
                _ = try CertificateFields(der: bytes)
            } catch {
                guard case .invalidParameter(let text) = error, text.hasPrefix("certificate: ") else {
                    Issue.record("unexpected error \(error)")
                    continue
                }
                rejected += 1
            }
        }
        // Most single-byte changes land in key or signature bytes, which are not parsed; headers are.
        #expect(rejected > 100)
    }
}

@Suite("DER reader")
struct DERReaderTests {
    @Test("Reads tags, lengths and contents, and opens nested elements")
    func basics() throws {
        let bytes: [UInt8] = [0x30, 0x06, 0x02, 0x01, 0x05, 0x04, 0x01, 0xff, 0x05, 0x00]
        var reader = DERReader(bytes)
        let outer = try reader.readElement(tag: 0x30, "SEQUENCE")
        #expect(outer == DERReader.Element(tag: 0x30, start: 0, contentStart: 2, end: 8))
        #expect(outer.isConstructed)
        #expect(reader.peekTag() == 0x05)
        var inner = try reader.reader(into: outer)
        #expect(inner.depth == 1)
        let integer = try inner.readElement(tag: 0x02, "INTEGER")
        #expect(inner.content(of: integer) == [0x05])
        #expect(inner.encoding(of: integer) == [0x02, 0x01, 0x05])
        let octets = try inner.readElement("OCTET STRING")
        #expect(octets.tag == 0x04 && !octets.isConstructed)
        try inner.expectEnd("SEQUENCE")
        #expect(inner.peekTag() == nil)
        _ = try reader.readElement(tag: 0x05, "NULL")
        #expect(reader.isAtEnd)
        #expect(throws: DERError.self) { try reader.readElement("anything") }
    }

    @Test("Long-form lengths of one to four bytes are read when minimal")
    func longForm() throws {
        var one = DERReader([0x04, 0x81, 0x80] + [UInt8](repeating: 7, count: 128))
        #expect(try one.readElement("OCTET STRING").contentStart == 3)
        var two = DERReader([0x04, 0x82, 0x01, 0x00] + [UInt8](repeating: 7, count: 256))
        #expect(try two.readElement("OCTET STRING").end == 260)
        var notMinimal = DERReader([0x04, 0x81, 0x7f] + [UInt8](repeating: 7, count: 127))
        #expect(throws: DERError(offset: 1, reason: "OCTET STRING: long-form length 127 (not minimal)")) {
            try notMinimal.readElement("OCTET STRING")
        }
    }

    @Test("Exactly 32 levels can be opened; the 33rd is refused")
    func depthLimit() throws {
        var bytes: [UInt8] = []
        for _ in 0..<33 { bytes = tlv(0x30, bytes) }
        var reader = DERReader(bytes)
        var element = try reader.readElement("level 1")
        for level in 2...33 {
            reader = try reader.reader(into: element)
            element = try reader.readElement("level \(level)")
        }
        #expect(reader.depth == 32)
        #expect(throws: DERError.self) { try reader.reader(into: element) }
    }
}
