#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Prints the demo's numbered steps and their details, and owns its temporary directory.
struct DemoNarrator {
    private var number = 0

    /// Starts a step: its number and title, and the kcf command that does the same.
    mutating func step(_ title: String, command: String? = nil) {
        number += 1
        Output.line("")
        Output.line("\(number). \(title)")
        if let command { Output.line("   $ \(command)") }
    }

    /// One detail of the current step: a label and a value, aligned.
    func detail(_ label: String, _ value: String) {
        Output.line("   " + (label + ":").padding(toLength: 20, withPad: " ", startingAt: 0) + value)
    }

    /// A new directory for the demo, mode 0700, under the system's temporary directory.
    ///
    /// - Throws: `CommandError` with status `.io` when mkdtemp(3) fails.
    static func makeTemporaryDirectory() throws(CommandError) -> String {
        var base = FileManager.default.temporaryDirectory.path
        while base.hasSuffix("/") && base.count > 1 { base.removeLast() }
        var template = Array((base + "/kcf-demo-XXXXXX").utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw .failure("cannot create a temporary directory under \(base): \(SystemError.describe(errno))", .io)
        }
        return String(cString: created)
    }
}

extension String {
    /// The text in double quotes, for the demo's output.
    var quotedForDemo: String { SecurityText.quoted(Array(utf8)) }
}
