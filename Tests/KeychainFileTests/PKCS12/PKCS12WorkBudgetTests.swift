import Testing
@testable import KeychainFile

/// The bound on all the key derivations one PKCS #12 file asks for: each is at most 10,000,000 rounds, and a file
/// of many bags must not add them up to hours of work.
@Suite("PKCS #12: the key-derivation rounds of one file are bounded in all")
struct PKCS12WorkBudgetTests {
    @Test("A file written here (a MAC, the certificates' SafeContents, two keys, 1,000 rounds each) costs 4,000 rounds: read within that, refused below it, before any derivation past the limit")
    func writtenFile() throws {
        let certificate = try TestFixtures.bytes("certificates/rsa2048-v1.der")
        let key = try [UInt8](hexString: try #require(PKCS12ArchiveTests.manifest["ec-few-rounds.p12"]).pkcs8)
        let archive = PKCS12Archive(
            certificates: [PKCS12Certificate(der: certificate, localKeyID: [1])],
            privateKeys: [PKCS12PrivateKey(pkcs8: key, localKeyID: [1]), PKCS12PrivateKey(pkcs8: key, friendlyName: "second")])
        let file = try archive.encoded(password: "pw", iterations: 1_000)
        let enough = PKCS12WorkBudget(limit: 4_000)
        #expect(try PKCS12Archive(bytes: file, password: "pw", budget: enough) == archive)
        #expect(enough.spent == 4_000)
        let short = PKCS12WorkBudget(limit: 3_999)
        #expect(throws: PKCS12Error.tooMuchKeyDerivation(rounds: 4_000)) {
            try PKCS12Archive(bytes: file, password: "pw", budget: short)
        }
        #expect(short.spent == 3_000, "the last key's derivation was refused before it ran")
    }

    @Test("The legacy schemes cost twice their iteration count (the key and the IV are derived apart): OpenSSL's -legacy file, 2,048 rounds each as `openssl pkcs12 -info` prints, costs 10,240")
    func legacyFile() throws {
        let file = try TestFixtures.bytes("pkcs12/ec-openssl-legacy.p12")
        let budget = PKCS12WorkBudget()
        _ = try PKCS12Archive(bytes: file, password: PKCS12LegacyArchiveTests.password, budget: budget)
        #expect(budget.spent == 2_048 + 2 * 2_048 + 2 * 2_048, "the SHA-1 MAC, the RC2-40 certificates, the 3DES key")
    }

    @Test("The limit is five of the largest derivations, and an overflowing total is refused, not wrapped")
    func limits() throws {
        #expect(PKCS12WorkBudget.maximumTotalRounds == 50_000_000)
        let budget = PKCS12WorkBudget()
        try budget.charge(PKCS12Archive.maximumIterationCount)
        #expect(throws: PKCS12Error.tooMuchKeyDerivation(rounds: Int.max)) { try budget.charge(Int.max) }
        #expect(budget.spent == PKCS12Archive.maximumIterationCount)
    }
}
