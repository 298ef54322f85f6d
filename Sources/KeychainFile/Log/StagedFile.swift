#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How every keychain file is written whole (SPEC.md §15): under a temporary name in the same directory, made
/// durable, then put at its path — renamed over the file it replaces, or linked so that an existing file is
/// never replaced — and the directory synced. A crash leaves the old file or the new one, and at worst a
/// temporary file that the next writer removes (``RecordLog/removeStrayTemporaryFiles(besides:fileSystem:)``).
enum StagedFile {
    /// A temporary name beside `path`: `NAME.tmp-` and 12 random lowercase hexadecimal digits.
    static func temporaryName<Generator: RandomNumberGenerator>(for path: String, using generator: inout Generator) -> String {
        path + RecordLog.temporarySuffix + HexText.lowercase(randomBytes(6, using: &generator))
    }

    /// Writes a file with `body` under the name `temporary` (``temporaryName(for:using:)``) and puts it at `path`.
    ///
    /// - Parameters:
    ///   - replacing: Rename over an existing file (a rewrite), or link and refuse an existing one (a new keychain).
    ///   - body: Writes the file through the handle it is given; the file is synced after it returns.
    ///   - afterPlacing: Runs once the new file is in place, before the directory is synced, with what `body`
    ///     returned, the open handle and its identity: a failing directory sync then leaves the caller on the
    ///     new file.
    /// - Throws: what `body` throws, or `.io`, with nothing in place; `.invalidParameter` if `path` exists and
    ///   not `replacing`; `.notConfirmedDurable` once the file is in place but the directory sync failed.
    static func write<Written>(
        at path: String, temporary: String, replacing: Bool, fileSystem: any FileSystem,
        body: (any KeychainFileHandle) throws(KeychainError) -> Written,
        afterPlacing: (Written, any KeychainFileHandle, FileIdentity) -> Void = { _, _, _ in }
    ) throws(KeychainError) -> Written {
        let staging = try fileSystem.createExclusive(temporary)
        var placed = false
        do throws(KeychainError) {
            let written = try body(staging)
            try staging.sync()
            // Asked before the file is put in place: once it is, a failure must not leave the caller on the old
            // file (after a rotation the old master key no longer opens the new one).
            let identity = try staging.identity()
            if replacing {
                try fileSystem.rename(temporary, to: path)
            } else {
                do {
                    try fileSystem.link(temporary, to: path)
                } catch .io(_, let code, _) where code == EEXIST {
                    throw KeychainError.invalidParameter("a file already exists at \(path)")
                }
            }
            placed = true
            afterPlacing(written, staging, identity)
            // The new file is in place: what fails now does not undo it, so it is reported as a change that took
            // effect without confirmed durability, never as a plain failure.
            do throws(KeychainError) {
                if !replacing { try fileSystem.removeIfPresent(temporary) }
                try fileSystem.syncDirectory(containing: path)
            } catch {
                throw KeychainError.notConfirmedDurable(
                    operation: replacing ? "the rewrite of \(path)" : "the new keychain file \(path)",
                    reason: "it is in place, but \(error)")
            }
            return written
        } catch {
            if !placed {
                staging.close()
                try? fileSystem.removeIfPresent(temporary)
            }
            throw error
        }
    }
}
