/// Thrown by ``DERReader``: the offset in the input of the element that is wrong, and what is wrong.
struct DERError: Error, Equatable {
    /// The offset from the start of the input.
    let offset: Int
    /// What is wrong, for people.
    let reason: String
}
