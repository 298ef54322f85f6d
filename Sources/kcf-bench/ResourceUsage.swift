#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's peak resident memory and the bytes it has written, from Linux's /proc (zero elsewhere).
enum ResourceUsage {
    /// Resets the peak resident set size (VmHWM) to the current size, so that each benchmark size reports
    /// its own peak: writing "5" to /proc/self/clear_refs (Linux 4.0 and later).
    static func resetPeakResidentMemory() {
        guard let file = fopen("/proc/self/clear_refs", "w") else { return }
        fputs("5", file)
        fclose(file)
    }

    /// VmRSS from /proc/self/status, in bytes: the resident set size now.
    static func residentBytes() -> Int {
        procField(file: "/proc/self/status", name: "VmRSS:").map { $0 * 1024 } ?? 0
    }

    /// VmHWM from /proc/self/status, in bytes.
    static func peakResidentBytes() -> Int {
        procField(file: "/proc/self/status", name: "VmHWM:").map { $0 * 1024 } ?? 0
    }

    /// The CPU time this process has used so far, user and system, summed over all its threads, in nanoseconds.
    static func cpuNanoseconds() -> UInt64 {
        var usage = rusage()
        #if canImport(Glibc)
        let who = RUSAGE_SELF.rawValue
        #else
        let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return 0 }
        func nanoseconds(_ time: timeval) -> UInt64 { UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_usec) * 1_000 }
        return nanoseconds(usage.ru_utime) + nanoseconds(usage.ru_stime)
    }

    /// `wchar` from /proc/self/io: the bytes this process passed to write(2) and pwrite(2) so far.
    static func bytesWritten() -> Int {
        procField(file: "/proc/self/io", name: "wchar:") ?? 0
    }

    /// The first number after `name` on its line of a /proc file.
    private static func procField(file path: String, name: String) -> Int? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>? = nil
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0 {
            let text = String(cString: line!)
            guard text.hasPrefix(name) else { continue }
            let digits = text.dropFirst(name.count).filter { $0.isNumber }
            return Int(digits)
        }
        return nil
    }
}
