import Foundation
import Testing
import KeychainCrypto
@testable import KeychainFile

/// Errors read as sentences: the system's text for an errno, and Foundation's `localizedDescription` (issue 33).
@Suite("Errors a person can read")
struct ErrorTextTests {
    @Test("An I/O error names the operation, the path and the system's text for its errno")
    func ioErrorHasSystemText() throws {
        let directory = TemporaryDirectory()
        let missing = directory.path + "/nope.kcf"
        var thrown: KeychainError?
        do {
            _ = try Keychain.open(at: missing, credential: .key(SymmetricKey(size: .bits256)))
        } catch {
            thrown = error
        }
        let error = try #require(thrown)
        #expect(error.description.contains(missing), "\(error)")
        #expect(error.description.contains("No such file or directory"), "\(error)")
        #expect(error.description.contains("errno 2"), "\(error)")
    }

    @Test("localizedDescription is the error's own sentence, not Foundation's generic one")
    func localizedDescriptionIsTheSentence() {
        let errors: [KeychainError] = [
            .itemNotFound, .wrongCredentials, .corrupted(offset: 12, reason: "header MAC does not verify"),
            .io(operation: "open", errno: 13, path: "/x/y.kcf"),
        ]
        for error in errors {
            let text = (error as Error).localizedDescription
            #expect(text == error.description, "\(text)")
            #expect(!text.contains("could not be completed"), "\(text)")
        }
        #expect((KeychainError.io(operation: "open", errno: 13, path: "/x/y.kcf") as Error).localizedDescription
            == "open failed on /x/y.kcf: Permission denied (errno 13)")
    }
}
