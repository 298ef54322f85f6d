import KeychainTestSupport
import Testing

/// How the documentation check reads Markdown blocks and example regions: it must find every block and every
/// region, and refuse what it cannot pair up, or a drift between the docs and the tests could pass unseen.
@Suite("Example extraction")
struct ExampleExtractionTests {
    @Test("Swift blocks are read with their markers; other fences and indented code are not Swift blocks")
    func markdownBlocks() throws {
        let markdown = """
            # Title
            <!-- example: first -->
            ```swift
            let a = 1

            print(a)
            ```
                let indented = "not a block"
            ```
            not swift
            ```
            <!-- not an example: a fragment -->
            ```swift
            .package(path: "x"),
            ```

            ```swift
            unmarked()
            ```
            """
        let blocks = try MarkdownCodeBlock.swiftBlocks(in: markdown)
        #expect(blocks == [
            MarkdownCodeBlock(marker: .example("first"), text: "let a = 1\n\nprint(a)\n", line: 3),
            MarkdownCodeBlock(marker: .notAnExample("a fragment"), text: ".package(path: \"x\"),\n", line: 13),
            MarkdownCodeBlock(marker: .none, text: "unmarked()\n", line: 17),
        ])
    }

    @Test("A Swift block without its closing fence is an error, not a block that runs to the end")
    func unterminatedBlock() {
        #expect(throws: MarkdownCodeBlock.Unterminated.self) {
            try MarkdownCodeBlock.swiftBlocks(in: "text\n```swift\nlet a = 1\n")
        }
    }

    @Test("Regions lose their common indentation and regions of one name are joined in order")
    func regions() throws {
        let source = """
            // example: one
            import A
            // example end
            struct T {
                func f() {
                    // example: one

                    let x = 1
                    if x > 0 {
                        print(x)
                    }
                    // example end
                    // example: two
                      spaced()
                    // example end
                }
            }
            """
        let examples = try ExampleRegions.examples(in: source, file: "T.swift")
        #expect(examples == [
            "one": "import A\n\nlet x = 1\nif x > 0 {\n    print(x)\n}\n",
            "two": "spaced()\n",
        ])
    }

    @Test("Markers that do not pair up are errors", arguments: [
        "// example: a\nx\n",
        "x\n// example end\n",
        "// example: a\n// example: b\n// example end\n// example end\n",
        "// example:\nx\n// example end\n",
    ])
    func malformedRegions(source: String) {
        #expect(throws: ExampleRegions.Malformed.self) { try ExampleRegions.examples(in: source, file: "T.swift") }
    }
}
