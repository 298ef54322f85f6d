// kcf: the command-line tool for KeychainFile keychains, with the commands and flags of macOS security(1).
// `kcf help` lists the commands, where passwords come from, and the exit statuses; `kcf demo` shows
// everything working on a throwaway keychain.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

Output.prepare()
let environment: [String: String]
do throws(CommandError) {
    environment = try ProcessEnvironment.current()
} catch {
    Output.error("kcf: \(error.description)")
    exit(error.status.rawValue)
}
exit(Runner.run(Array(CommandLine.arguments.dropFirst()), environment: environment))
