import Foundation

/// Where a documentation example runs: its own process (an exit test) whose working directory is a fresh
/// temporary directory, so that the example's relative paths (`"secrets.kcf"`) and process-wide settings
/// (`SecItemKeychain.use`) touch nothing else.
public enum ExampleSandbox {
    /// Thrown when the working directory cannot be changed.
    public struct CannotEnter: Error, CustomStringConvertible {
        public let directory: String
        public var description: String { "cannot make \(directory) the working directory" }
    }

    /// Makes `directory` the process's working directory. Only for the process of an exit test: the working
    /// directory is shared by every thread.
    ///
    /// - Throws: ``CannotEnter`` if it is not a directory this process can enter.
    public static func enter(_ directory: String) throws {
        guard FileManager.default.changeCurrentDirectoryPath(directory) else { throw CannotEnter(directory: directory) }
    }
}
