import Foundation

/// Files of the repository (`Fixtures/`, `SPEC.md`, test data), found from this source file's path so that
/// tests run from any working directory and wherever their own files sit in the tree.
public enum RepositoryFiles {
    /// The repository's root directory.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // KeychainTestSupport
        .deletingLastPathComponent()  // Sources
        .deletingLastPathComponent()  // repository root

    /// The repository's `Fixtures` directory.
    public static let fixtures: URL = root.appendingPathComponent("Fixtures")

    /// The file at `relativePath` under the repository's root, e.g. `"SPEC.md"`.
    public static func url(_ relativePath: String) -> URL {
        root.appendingPathComponent(relativePath)
    }
}
