import Foundation
import KeychainFileFixtures

/// kcf-fixtures: writes the conformance fixtures of Fixtures/v1, v2 or v3 from seeded randomness; the
/// directory's name (`v1`, `v2`, `v3`) says which format version.
///
///     swift run kcf-fixtures write Fixtures/v2      (replaces the fixture files there)
///     swift run kcf-fixtures check Fixtures/v2      (regenerates into a temporary directory and compares)
let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2, ["write", "check"].contains(arguments[0]) else {
    FileHandle.standardError.write(Data("usage: kcf-fixtures (write|check) DIRECTORY\n".utf8))
    exit(2)
}
let target = arguments[1]
let certificates = URL(fileURLWithPath: target).deletingLastPathComponent().appendingPathComponent("certificates").path
let versionName = URL(fileURLWithPath: target).lastPathComponent
guard let formatVersion = ["v1": 1, "v2": 2, "v3": 3][versionName] else {
    FileHandle.standardError.write(Data("kcf-fixtures: the directory must be named v1, v2 or v3 (the format version), not \(versionName)\n".utf8))
    exit(2)
}

do {
    let scratch = NSTemporaryDirectory() + "kcf-fixtures-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    try FixtureGenerator.writeAll(into: scratch, certificates: certificates, formatVersion: formatVersion)
    let written = try FileManager.default.contentsOfDirectory(atPath: scratch).sorted()
    if arguments[0] == "write" {
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        // Files another writer made (Scripts/reference's `reference-*`) stay.
        for name in try FileManager.default.contentsOfDirectory(atPath: target)
        where (name.hasSuffix(".kcf") || name.hasSuffix(".json")) && !name.hasPrefix("reference-") {
            try FileManager.default.removeItem(atPath: target + "/" + name)
        }
        for name in written {
            try FileManager.default.copyItem(atPath: scratch + "/" + name, toPath: target + "/" + name)
        }
        print("wrote \(written.count) files to \(target)")
    } else {
        var differences = 0
        for name in written {
            let fresh = try Data(contentsOf: URL(fileURLWithPath: scratch + "/" + name))
            let committed = try? Data(contentsOf: URL(fileURLWithPath: target + "/" + name))
            if fresh != committed {
                print("differs: \(name)")
                differences += 1
            }
        }
        print(differences == 0 ? "all \(written.count) files identical" : "\(differences) of \(written.count) files differ")
        exit(differences == 0 ? 0 : 1)
    }
} catch {
    FileHandle.standardError.write(Data("kcf-fixtures: \(error)\n".utf8))
    exit(1)
}
