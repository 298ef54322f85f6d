/// Why an XML document cannot be read: where (a byte offset) and what is wrong.
struct XMLParseError: Error, CustomStringConvertible, Equatable {
    /// The byte offset of the problem in the document.
    let offset: Int
    /// What is wrong.
    let reason: String

    var description: String { "XML at byte \(offset): \(reason)" }
}
