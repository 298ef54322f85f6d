/// Record kinds (SPEC.md §7.1).
enum RecordKind: UInt8, Sendable {
    case put = 1
    case delete = 2
    case transaction = 3
}
