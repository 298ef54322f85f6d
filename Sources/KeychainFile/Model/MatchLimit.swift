/// How many matching items a search returns.
///
/// For example:
/// ```swift
/// var query = Query.genericPassword(service: "mail")
/// query.limit = .one
/// ```
public enum MatchLimit: Sendable, Hashable {
    /// The first match.
    case one
    /// Every match.
    case all
}
