/// A fenced ```` ```swift ```` block of a Markdown file (the README, a DocC article), with the marker on the line
/// just above its opening fence that says what the tests do with it:
///
///     <!-- example: quick-start -->          the block is the example region "quick-start" (ExampleRegions)
///     <!-- not an example: a Package.swift fragment -->    the block is not run, for the reason given
///
/// Only fences at the start of a line count; indented code blocks and fences of other languages are not Swift
/// examples.
public struct MarkdownCodeBlock: Equatable, Sendable {
    /// What the marker above a block says.
    public enum Marker: Equatable, Sendable {
        /// The block is the example region of this name.
        case example(String)
        /// The block is not run, for this reason.
        case notAnExample(String)
        /// There is no marker above the block.
        case none
    }

    /// The marker above the block.
    public let marker: Marker
    /// The lines between the fences, each with its line feed.
    public let text: String
    /// The line of the opening fence, counting from 1.
    public let line: Int

    public init(marker: Marker, text: String, line: Int) {
        self.marker = marker
        self.text = text
        self.line = line
    }

    /// Thrown for a Swift block whose closing fence is missing.
    public struct Unterminated: Error, CustomStringConvertible {
        public let line: Int
        public var description: String { "the ```swift block opened on line \(line) is never closed" }
    }

    /// The Swift blocks of `markdown`, in order.
    ///
    /// - Throws: ``Unterminated`` for a block without a closing fence.
    public static func swiftBlocks(in markdown: String) throws -> [MarkdownCodeBlock] {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [MarkdownCodeBlock] = []
        var index = 0
        while index < lines.count {
            guard lines[index] == "```swift" else {
                index += 1
                continue
            }
            let opening = index
            var body = ""
            index += 1
            while index < lines.count, lines[index] != "```" {
                body += lines[index] + "\n"
                index += 1
            }
            guard index < lines.count else { throw Unterminated(line: opening + 1) }
            index += 1
            blocks.append(MarkdownCodeBlock(
                marker: opening > 0 ? marker(lines[opening - 1]) : .none, text: body, line: opening + 1))
        }
        return blocks
    }

    /// The marker a line holds, if any.
    static func marker(_ line: String) -> Marker {
        let trimmed = line.trimmingSpaces
        guard trimmed.hasPrefix("<!--"), trimmed.hasSuffix("-->") else { return .none }
        let inside = String(trimmed.dropFirst(4).dropLast(3)).trimmingSpaces
        if inside.hasPrefix("example:") { return .example(String(inside.dropFirst("example:".count)).trimmingSpaces) }
        if inside.hasPrefix("not an example:") {
            return .notAnExample(String(inside.dropFirst("not an example:".count)).trimmingSpaces)
        }
        return .none
    }
}

extension String {
    /// The string without spaces at either end.
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
