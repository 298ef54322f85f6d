/// Thrown when the plaintext of an attributes box does not follow SPEC.md §7.3.
///
/// `offset` is the byte offset within the plaintext of the field that is wrong (the start of the
/// attribute for a tag problem, its type byte for a wrong type, its length field for a bad length, its
/// value for a bad value); `reason` says what is wrong. The record layer turns it into
/// `KeychainError.corrupted`, adding the offset of the box.
struct AttributeDecodingError: Error, Equatable, CustomStringConvertible {
    /// The offset within the plaintext of the field that failed.
    let offset: Int
    /// What is wrong, for people.
    let reason: String

    var description: String { "attributes at byte \(offset): \(reason)" }
}
