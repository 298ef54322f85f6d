import Foundation
import KeychainFile
import Testing

/// The progress line of opening a large keychain: drawn on a terminal's stderr as the library reports the bytes
/// verified, erased before the command's own line, and never when stderr is a pipe — or for a small file (whose
/// verify draws only its own line: ``ProgressLineTests``).
@Suite("kcf progress: opening a large keychain")
struct OpeningProgressLineTests {
    /// A keychain of the sandbox of about 7 MiB: 3,000 generic passwords with 2 KiB secrets, in records of 200.
    static func largeKeychain(formatVersion: Int) throws -> KcfSandbox {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain(formatVersion: formatVersion)
        let keychain = try Keychain.open(at: sandbox.keychain, credential: .password(KcfSandbox.password))
        let secret = String(repeating: "s", count: 2_048)
        for start in stride(from: 0, to: 3_000, by: 200) {
            try keychain.batch { (batch) throws(KeychainError) in
                for number in start..<(start + 200) {
                    try batch.add(GenericPassword(service: "svc", account: "user\(number)", password: secret))
                }
            }
        }
        return sandbox
    }

    @Test("verify and compact of a large keychain draw the open's bytes verified on a terminal, erased before their own line",
          .enabled(if: ShellProcess.exists("python3"), "python3 (for its pty module) is not installed"), arguments: [2, 1])
    func terminal(formatVersion: Int) throws {
        let sandbox = try Self.largeKeychain(formatVersion: formatVersion)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: sandbox.keychain)[.size] as? Int)
        let prefix = "kcf: verify: opening the keychain: bytes verified "
        let verify = try ProgressLineTests.onTerminal(["verify"], sandbox)
        #expect(verify.status == 0)
        #expect(verify.stdout.hasSuffix("result: OK\n"))
        // The open's line first, with a count short of the total; erased; then verify's own line.
        #expect(verify.terminal.hasPrefix("\r" + prefix), "\(verify.terminal.debugDescription)")
        let drawn = verify.terminal.dropFirst().prefix { $0 != "\r" }
        let numbers = drawn.dropFirst(prefix.count).split(separator: " ")
        #expect(numbers.count == 4 && numbers[1] == "of", "\(drawn)")
        if numbers.count == 4, let completed = Int(numbers[0]), let total = Int(numbers[2]) {
            #expect(completed >= 1 << 20 && completed < total && total > 3_000 * 2_048 && total <= size, "\(drawn)")
        }
        // A slow machine may draw the line again, longer; each drawing is padded to the widest so far, and the
        // erase covers the widest.
        let drawings = verify.terminal.split(separator: "\r").prefix { !$0.allSatisfy { $0 == " " } }
        let erased = "\r" + String(repeating: " ", count: drawings.map(\.count).max() ?? drawn.count) + "\r"
        #expect(verify.terminal.contains(erased))
        let afterOpen = String(verify.terminal.components(separatedBy: erased).last ?? "")
        #expect(ProgressLineTests.drawnRedrawnAndErased(afterOpen, first: "kcf: verify: decrypting every secret, class 0 of 4 (0%)"),
                "\(afterOpen.debugDescription)")

        let compact = try ProgressLineTests.onTerminal(["compact"], sandbox)
        #expect(compact.status == 0)
        #expect(compact.terminal.hasPrefix("\rkcf: compact: opening the keychain: bytes verified "), "\(compact.terminal.debugDescription)")
        #expect(compact.terminal.contains("\rkcf: compact: rewriting the file: items written"))
    }

    @Test("with stderr a pipe, opening a large keychain writes nothing to it")
    func piped() throws {
        let sandbox = try Self.largeKeychain(formatVersion: 2)
        for arguments in [["verify"], ["compact"], ["dump-keychain"]] {
            let piped = try sandbox.unlocked(arguments)
            #expect(piped.status == 0, "\(arguments): \(piped.stderr)")
            #expect(piped.stderr.isEmpty, "\(arguments): \(piped.stderr)")
        }
    }
}
