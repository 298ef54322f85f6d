import Foundation

/// Finds an executable product that `swift test` built beside the test binary (`kcf`, `kcf-worker`).
public enum BuiltExecutable {
    /// Thrown when the product is in none of the places looked at.
    public struct NotFound: Error, CustomStringConvertible {
        public let name: String
        public let directories: [String]
        public var description: String {
            "\(name) not found in \(directories.joined(separator: ", ")); build it with `swift build`, or set its path in the environment"
        }
    }

    /// The product `name`: the path in `$variable` if set, else the file beside the test binary or bundle.
    ///
    /// - Throws: ``NotFound`` naming the directories looked in.
    public static func locate(_ name: String, overriddenBy variable: String) throws -> URL {
        if let path = ProcessInfo.processInfo.environment[variable] { return URL(fileURLWithPath: path) }
        var directories: [URL] = []
        // macOS: the .xctest bundle is loaded by a runner; the products sit beside the bundle.
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            directories.append(bundle.bundleURL.deletingLastPathComponent())
        }
        // Linux: the test binary is itself the product, in the products directory.
        directories.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent())
        directories.append(Bundle.main.bundleURL)
        directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for directory in directories {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw NotFound(name: name, directories: directories.map(\.path))
    }
}
