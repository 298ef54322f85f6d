/// Which items a query matches by their synchronizable flag, as Apple's `kSecAttrSynchronizable` with
/// `kSecAttrSynchronizableAny`. Apple's default, and this one's, is ``no``.
///
/// For example:
/// ```swift
/// var query = Query.genericPassword(service: "mail")
/// query.synchronizable = .any  // synchronised and local items alike
/// ```
public enum SynchronizableMatch: Sendable, Hashable {
    /// Only items that are not synchronised (absent counts as not synchronised).
    case no
    /// Only items that are synchronised.
    case yes
    /// Items either way.
    case any
}
