/// A section of `kcf help` after the command list, which the manual page has too.
///
/// Its lines are written as `kcf help` prints them (after a four-space indent): prose, or items that start
/// with `- ` and continue on lines indented by two spaces. The manual page fills the prose and makes the items
/// a list.
struct HelpSection: Sendable {
    /// The heading in `kcf help`, such as `keychain file:`.
    let heading: String
    /// The heading in the manual page, such as `KEYCHAIN FILE`.
    let manualHeading: String
    /// The text.
    let lines: [String]
}
