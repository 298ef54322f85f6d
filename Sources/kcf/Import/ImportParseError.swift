/// Why a file to import cannot be read as a whole: nothing of it is imported.
///
/// The command prefixes the file's path; ``line`` points into the file where it can (1 is the first line).
struct ImportParseError: Error, CustomStringConvertible {
    /// The line the problem is on, when it is about one place in the file.
    let line: Int?
    /// What is wrong, in words a person can act on.
    let reason: String

    init(line: Int? = nil, _ reason: String) {
        self.line = line
        self.reason = reason
    }

    var description: String {
        line.map { "line \($0): \(reason)" } ?? reason
    }
}
