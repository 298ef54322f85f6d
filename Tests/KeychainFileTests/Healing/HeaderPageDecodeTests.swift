import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// A header page's parity only proposes: a header that verifies as read is the copy, whatever the parity would
/// make of it; a proposal is used only when the header as read fails, and then even if some codeword was beyond
/// repair, as long as its checksum verifies.
@Suite("Healing: header pages prefer what verifies as read")
struct HeaderPageDecodeTests {
    @Test("A header that verifies as read, over parity left from another header that parity would restore: the header as read, reported repaired")
    func headerAsReadBeatsTheProposal() throws {
        let (old, header, key) = try HeaderV2DamageTests.make()
        let new = try HeaderV2DamageTests.variant(of: header, rewriteEnd: 8_192, masterKey: key).bytes
        #expect(new.count == old.count && new != old)
        // A torn in-place write: the new header landed, the parity sectors are still the old header's.
        var page = HeaderPage.encode(old)
        page.replaceSubrange(0..<new.count, with: new)
        // The parity alone would restore the old header, which verifies too.
        guard case .repaired(let bytes, let repaired) = HeaderPage.decode(page) else {
            Issue.record("\(HeaderPage.decode(page))")
            return
        }
        #expect(bytes == new && repaired > 0)
        let opened = try OpenedHeaderV2(pageA: page, pageB: page, credential: HeaderV2DamageTests.password)
        #expect(opened.headerBytes == new)
    }

    @Test("A damaged header whose only unrepairable codeword has its damage in the pad: the proposal is used")
    func proposalDespiteAnUnrepairableCodewordInThePad() throws {
        let (bytes, _, _) = try HeaderV2DamageTests.make()
        var page = HeaderPage.encode(bytes)
        // Three bytes of the header in codeword 0: the header as read fails its checksum.
        for symbol in [1, 2, 3] { page[symbol * 16] ^= 0x77 }
        // Twenty pad bytes of codeword 5, past the header: beyond its 16-symbol repair.
        let firstPadSymbol = (bytes.count + 15) / 16 + 1
        for symbol in firstPadSymbol..<(firstPadSymbol + 20) { page[symbol * 16 + 5] ^= 0x5A }
        guard case .repaired(let header, _) = HeaderPage.decode(page) else {
            Issue.record("\(HeaderPage.decode(page))")
            return
        }
        #expect(header == bytes)
    }
}
