#if canImport(Glibc)
import Glibc
#endif

/// Properties that must hold whatever the input: a violation is a bug even though nothing crashed, so it
/// is turned into a crash that libFuzzer records.
enum Invariant {
    static func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        guard !condition() else { return }
        fputs("fuzz invariant violated: \(message())\n", stderr)
        abort()
    }
}
