#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The system calls the POSIX file system makes, wrapped so that they read the same on every platform, and
// retried on EINTR.

/// Runs a system call, retrying on EINTR; a negative result becomes `KeychainError.io`.
func retrying<Result: BinaryInteger>(
    _ operation: String, _ path: String, _ call: () -> Result
) throws(KeychainError) -> Result {
    while true {
        let result = call()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        throw KeychainError.io(operation: operation, errno: code, path: path)
    }
}

/// The directory part of a path ("." for a bare file name).
func directoryName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let directory = String(path[..<slash])
    return directory.isEmpty ? "/" : directory
}

func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Glibc)
    return Glibc.open(path, flags, mode)
    #elseif canImport(Musl)
    return Musl.open(path, flags, mode)
    #else
    return Darwin.open(path, flags, mode)
    #endif
}

func systemClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
    return Glibc.close(descriptor)
    #elseif canImport(Musl)
    return Musl.close(descriptor)
    #else
    return Darwin.close(descriptor)
    #endif
}

func systemLink(_ source: String, _ destination: String) -> Int32 {
    #if canImport(Glibc)
    return Glibc.link(source, destination)
    #elseif canImport(Musl)
    return Musl.link(source, destination)
    #else
    return Darwin.link(source, destination)
    #endif
}

func systemRename(_ source: String, _ destination: String) -> Int32 {
    #if canImport(Glibc)
    return Glibc.rename(source, destination)
    #elseif canImport(Musl)
    return Musl.rename(source, destination)
    #else
    return Darwin.rename(source, destination)
    #endif
}
