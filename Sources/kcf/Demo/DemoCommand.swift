import Foundation
import KeychainFile

/// `kcf demo`: a throwaway keychain in a new temporary directory, one item of every class stored, found,
/// updated, deleted, the file compacted and reopened, each step printed with what it found.
enum DemoCommand {
    /// The demo keychain's password: fixed and printed, because the keychain is thrown away.
    static let password = "kcf demo password"
    /// The demo's PBKDF2 cost: far below the 600,000 a real keychain gets, so that the demo is instant.
    static let iterations: UInt32 = 1_000

    static let command = Command(
        name: "demo", summary: "store, find, update, delete, compact and reopen on a throwaway keychain",
        options: [OptionSpec(long: "keep", help: "keep the temporary directory and print its path")],
        details: ["""
            Needs nothing set up: works in a new temporary directory, with a fixed demo password and an
            insecure PBKDF2 cost (both printed), and removes the directory afterwards unless --keep is given.
            """],
        run: { (context) throws(CommandError) in try run(keep: context.has("keep")) })

    private static func run(keep: Bool) throws(CommandError) -> ExitStatus {
        let directory = try DemoNarrator.makeTemporaryDirectory()
        defer { if !keep { try? FileManager.default.removeItem(atPath: directory) } }
        Output.line("kcf demo: every step calls the KeychainFile library as the kcf command shown would.")
        var session = try DemoSession(path: directory + "/demo.kcf")
        try session.addOneOfEach()
        try session.query()
        try session.update()
        try session.delete()
        try session.compact()
        try session.reopen()
        try session.wrongPassword()
        Output.line("")
        if keep {
            Output.line("Done. The demo keychain is kept at \(session.path.quotedForDemo) (password \(password.quotedForDemo)).")
        } else {
            Output.line("Done. The temporary directory \(directory.quotedForDemo) was removed.")
        }
        return .success
    }
}
