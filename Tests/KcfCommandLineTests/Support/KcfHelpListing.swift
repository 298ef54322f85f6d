import Foundation
import Testing

/// What `kcf help` says there is: the expectations of the tests that check a generated text (completion
/// scripts, the manual page) names everything.
enum KcfHelpListing {
    /// The commands `kcf help` lists, each with the option spellings `kcf help COMMAND` lists.
    static func read(_ sandbox: KcfSandbox) throws -> [(command: String, options: [String])] {
        let overview = try sandbox.run(["help"]).stdout
        let commandLines = overview.components(separatedBy: "\ncommands:\n")[1].components(separatedBy: "\n\n")[0]
        let commands = commandLines.split(separator: "\n").map { String($0.split(separator: " ")[0]) }
        return try commands.map { command in
            let usage = try sandbox.run(["help", command]).stdout
            let optionLines = usage.components(separatedBy: "\noptions:\n")[1].components(separatedBy: "\n\n")[0]
            let options = optionLines.split(separator: "\n").flatMap { line in
                line.split(separator: " ")[0].split(separator: "|").map(String.init)
            }
            return (command, options)
        }
    }
}
