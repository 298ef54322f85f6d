import KeychainFile

/// An option that sets or matches one attribute of a password item, such as `-a ACCOUNT`.
struct AttributeOption: Sendable {
    /// The option.
    let spec: OptionSpec
    /// The attribute it sets or matches.
    let attribute: Attribute
    /// Turns the option's text into the attribute's value.
    let parse: @Sendable (String) throws(CommandError) -> AttributeValue

    /// The attribute values given on a command line, by attribute.
    static func values(of options: [AttributeOption], in context: CommandContext) throws(CommandError) -> [Attribute: AttributeValue] {
        var values: [Attribute: AttributeValue] = [:]
        for option in options {
            guard let text = context.value(option.spec.key) else { continue }
            values[option.attribute] = try option.parse(text)
        }
        return values
    }
}
