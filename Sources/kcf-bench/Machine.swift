#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-line description of the machine: processor model and online core count.
func machineDescription() -> String {
    let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
    var model = "unknown processor"
    if let file = fopen("/proc/cpuinfo", "r") {
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>? = nil
        var capacity = 0
        while getline(&line, &capacity, file) > 0 {
            let text = String(cString: line!)
            if text.hasPrefix("model name") {
                if let colon = text.firstIndex(of: ":") {
                    model = text[text.index(after: colon)...].trimmingSpaces()
                }
                break
            }
        }
        free(line)
    }
    return "\(model), \(cores) cores"
}

extension Substring {
    func trimmingSpaces() -> String {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\n" || last == "\t" { text.removeLast() }
        return String(text)
    }
}
