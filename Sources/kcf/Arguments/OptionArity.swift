/// How an option takes a value.
enum OptionArity: Equatable, Sendable {
    /// A switch without a value, such as `-U`.
    case flag
    /// An option that needs a value, such as `-a ACCOUNT`.
    case value(String)
    /// An option whose value may be left out, such as `-w [PASSWORD]`: the next argument is its value
    /// only when it is `-` or does not start with `-`.
    case optionalValue(String)
}
