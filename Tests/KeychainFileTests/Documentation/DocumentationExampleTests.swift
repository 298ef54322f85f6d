import Foundation
import KeychainTestSupport
import Testing

/// The Swift blocks of README.md and of the DocC articles are the code the tests run: each block marked
/// `<!-- example: NAME -->` is, byte for byte, the example region NAME of a file in a `DocumentationExamples`
/// folder of the tests, which compiles it (with only the block's imports) and runs it.
@Suite("Documentation examples")
struct DocumentationExampleTests {
    /// The documents whose Swift blocks are checked.
    static let documents = ["README.md"] + (try! FileManager.default.contentsOfDirectory(
        atPath: RepositoryFiles.url("Sources/KeychainFile/KeychainFile.docc").path))
        .filter { $0.hasSuffix(".md") }.sorted().map { "Sources/KeychainFile/KeychainFile.docc/" + $0 }

    /// Every example region of the tests, by name, with the file it is in.
    static func regions() throws -> [String: (text: String, file: String)] {
        var regions: [String: (text: String, file: String)] = [:]
        let tests = RepositoryFiles.url("Tests")
        for target in try FileManager.default.contentsOfDirectory(atPath: tests.path).sorted() {
            let folder = tests.appendingPathComponent(target).appendingPathComponent("DocumentationExamples")
            guard let files = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { continue }
            for file in files.sorted() where file.hasSuffix(".swift") {
                let relative = "Tests/\(target)/DocumentationExamples/\(file)"
                let source = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                for (name, text) in try ExampleRegions.examples(in: source, file: relative) {
                    if let earlier = regions[name] {
                        Issue.record("example \(name) is in both \(earlier.file) and \(relative)")
                    }
                    regions[name] = (text, relative)
                }
            }
        }
        return regions
    }

    static func blocks(of document: String) throws -> [MarkdownCodeBlock] {
        try MarkdownCodeBlock.swiftBlocks(in: String(contentsOf: RepositoryFiles.url(document), encoding: .utf8))
    }

    @Test("Every Swift block of the README and the DocC articles is marked as an example or says why it is not", arguments: documents)
    func everyBlockIsMarked(document: String) throws {
        let blocks = try Self.blocks(of: document)
        if document == "README.md" { #expect(!blocks.isEmpty, "README.md has no Swift blocks: is the path right?") }
        for block in blocks {
            #expect(block.marker != .none, "\(document):\(block.line): a ```swift block without <!-- example: NAME --> or <!-- not an example: WHY --> above it")
        }
    }

    @Test("Every example block is its region of the tests, byte for byte", arguments: documents)
    func blocksAreTheTestedCode(document: String) throws {
        let regions = try Self.regions()
        for block in try Self.blocks(of: document) {
            guard case .example(let name) = block.marker else { continue }
            guard let region = regions[name] else {
                Issue.record("\(document):\(block.line): no test holds example \(name) (// example: \(name) … // example end)")
                continue
            }
            #expect(block.text == region.text, "\(document):\(block.line) differs from \(name) in \(region.file):\n\(Self.firstDifference(block.text, region.text))")
        }
    }

    @Test("Every example region of the tests is shown in a document, once")
    func everyRegionIsShown() throws {
        var shown: [String: Int] = [:]
        for document in Self.documents {
            for block in try Self.blocks(of: document) {
                if case .example(let name) = block.marker { shown[name, default: 0] += 1 }
            }
        }
        let regions = try Self.regions()
        #expect(regions.count >= 8, "found only \(regions.keys.sorted())")
        for (name, region) in regions {
            #expect(shown[name] == 1, "example \(name) of \(region.file) is shown \(shown[name] ?? 0) times in the documents")
        }
    }

    /// The first line where two texts differ, for the failure message.
    static func firstDifference(_ document: String, _ test: String) -> String {
        let left = document.split(separator: "\n", omittingEmptySubsequences: false)
        let right = test.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? String(left[index]) : "(end)"
            let b = index < right.count ? String(right[index]) : "(end)"
            if a != b { return "line \(index + 1) of the block:\n  document: \(a)\n  test:     \(b)" }
        }
        return "(no line differs)"
    }
}
