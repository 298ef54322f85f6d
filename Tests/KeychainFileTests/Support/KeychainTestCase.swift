import Foundation
import Testing
@testable import KeychainFile

/// A fresh temporary directory per test, removed afterwards.
final class TemporaryDirectory {
    let path: String

    init() {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("kcf-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        path = base.path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }
}

/// Test credentials: fast PBKDF2 (1,000 rounds) so tests do not spend their time in the KDF.
enum TestKeychain {
    static let password = Credential.password("correct horse battery staple")
    static let fastOptions = Keychain.CreationOptions(passwordIterations: .insecureForTesting(1_000))
    /// ``fastOptions`` for a file of format version 1, whatever the default, that rewrites keep at version 1: for
    /// tests of version 1's layout and rules (record offsets, the lock file's acknowledgement, torn tails,
    /// compaction). A keychain opened again needs ``versionOneOpenOptions`` to keep it so.
    static let versionOneOptions = options(formatVersion: 1)
    /// Open options that keep a version 1 file at version 1 through rewrites.
    static let versionOneOpenOptions = Keychain.OpenOptions(keepsFormatVersion: true)

    /// ``fastOptions`` for a file of `formatVersion`; one of version 1 stays version 1 through rewrites.
    static func options(formatVersion: Int) -> Keychain.CreationOptions {
        var options = fastOptions
        options.formatVersion = formatVersion
        options.keepsFormatVersion = formatVersion == 1
        return options
    }

    /// A new keychain in `directory`, of `formatVersion` when given, else of the default version.
    static func create(in directory: TemporaryDirectory, name: String = "test.kcf",
                       credential: Credential = password, formatVersion: Int? = nil) throws -> Keychain {
        try Keychain.create(at: directory.file(name), credential: credential,
                            options: formatVersion.map { options(formatVersion: $0) } ?? fastOptions)
    }
}

/// Everything observable about a keychain's generic passwords: each one's persistent reference, attributes and
/// secret, in search order — what two keychains that hold the same items agree on.
func genericPasswordSnapshot(_ keychain: Keychain) throws -> [String] {
    let results = try keychain.search(Query(.genericPassword, limit: .all), returning: [.attributes, .data, .persistentReference])
    return results.map { "\($0.persistentReference!.itemID) \($0.attributes!) \($0.value!)" }
}

func fileBytes(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

func writeFileBytes(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Flips bit `bit` of byte `offset` of the file at `path`, as a failing disk or a stray write would.
func flipBit(_ path: String, at offset: Int, bit: Int = 3) throws {
    var bytes = try fileBytes(path)
    bytes[offset] ^= UInt8(1 << bit)
    try writeFileBytes(bytes, to: path)
}

/// Writes `frame` (a record's frame header and body) to `path` and calls `body` with a reader over the body
/// through windows of `windowSize` bytes, as replay reads a record.
func withFrameBodyReader<Result>(
    overFrame frame: [UInt8], writtenTo path: String, windowSize: Int, _ body: (inout FrameBodyReader) throws -> Result
) throws -> Result {
    try writeFileBytes(frame, to: path)
    let file = try PosixFileSystem().openExisting(path)
    defer { file.close() }
    var reader = FrameBodyReader(
        file: file, bodyOffset: Format.frameHeaderSize, bodyLength: frame.count - Format.frameHeaderSize, windowSize: windowSize)
    return try body(&reader)
}

