/// One `--env NAME=SERVICE/ACCOUNT` of `kcf run`: the variable to set and the generic password whose secret
/// it gets.
struct EnvironmentSecret: Equatable {
    /// The variable's name: a letter or `_`, then letters, digits and `_`.
    let name: String
    /// The generic password's service: everything before the last `/`.
    let service: String
    /// The generic password's account: everything after the last `/` (so an account cannot hold `/`).
    let account: String

    /// Parses `NAME=SERVICE/ACCOUNT`.
    ///
    /// - Throws: `CommandError.usage` saying what is wrong: no `=`, a name that is not a shell variable's, no
    ///   `/`, an empty service.
    init(_ text: String) throws(CommandError) {
        guard let equals = text.firstIndex(of: "=") else {
            throw .usage("--env \(text): give NAME=SERVICE/ACCOUNT")
        }
        name = String(text[..<equals])
        let item = text[text.index(after: equals)...]
        let isLetter: (Character) -> Bool = { $0 == "_" || ($0.isASCII && $0.isLetter) }
        guard let first = name.first, isLetter(first), name.allSatisfy({ isLetter($0) || ($0.isASCII && $0.isNumber) }) else {
            throw .usage("--env \(text): \"\(name)\" is not a variable name (a letter or _, then letters, digits, _)")
        }
        guard let slash = item.lastIndex(of: "/") else {
            throw .usage("--env \(text): give the item as SERVICE/ACCOUNT (the account is after the last /)")
        }
        service = String(item[..<slash])
        account = String(item[item.index(after: slash)...])
        guard !service.isEmpty else { throw .usage("--env \(text): the service is empty") }
    }

    /// How the item is named in messages: `NAME=SERVICE/ACCOUNT`.
    var description: String { "\(name)=\(service)/\(account)" }
}
