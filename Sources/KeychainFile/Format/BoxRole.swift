/// Box roles in the associated data (SPEC.md §7.2).
enum BoxRole: UInt8, Sendable {
    case attributes = 1
    case secret = 2
    case deletion = 3
}
