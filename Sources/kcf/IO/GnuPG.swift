/// Decrypts the files of a password store as `pass` does: `gpg --decrypt --batch --quiet -- FILE`, with the
/// user's gpg, keys and agent (`$GNUPGHOME`, `$GPG_TTY`: kcf's environment).
///
/// gpg's exit status alone does not say that a file was decrypted: a file cut after its session key packet
/// exits 0 with no output (status NODATA), as does one whose integrity check fails after its plaintext was
/// printed (DECRYPTION_FAILED). So gpg also reports its status on stderr (`--status-fd 2`), and a file counts
/// as decrypted only when gpg exits 0, says DECRYPTION_OKAY, and says neither DECRYPTION_FAILED nor BADMDC.
enum GnuPG {
    /// Why a file could not be decrypted.
    enum Failure: Error {
        /// gpg is not on `$PATH`: nothing can be decrypted.
        case notInstalled
        /// gpg could not be started; the system's words.
        case cannotRun(String)
        /// gpg failed on this file: its exit status and what it printed on stderr, on one line.
        case failed(status: Int32, message: String)
        /// The file decrypts to more than the limit.
        case tooLarge(limit: Int)
    }

    /// How gpg starts a status line.
    static let statusPrefix = "[GNUPG:] "

    /// The plaintext of the file at `path`.
    ///
    /// - Parameter limit: The most bytes the plaintext may have.
    /// - Throws: ``Failure``.
    static func decrypt(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
        let result: CapturedProcess.Result
        do throws(CapturedProcess.Failure) {
            result = try CapturedProcess.run(["gpg", "--decrypt", "--batch", "--quiet", "--status-fd", "2", "--", path], outputLimit: limit)
        } catch {
            switch error {
            case .notFound: throw .notInstalled
            case .cannotRun(let reason): throw .cannotRun(reason)
            }
        }
        if result.exceededLimit { throw .tooLarge(limit: limit) }
        let lines = String(decoding: result.errors, as: UTF8.self).split(whereSeparator: \.isNewline)
        let statuses = Set(lines.filter { $0.hasPrefix(statusPrefix) }.compactMap { $0.dropFirst(statusPrefix.count).split(separator: " ").first.map(String.init) })
        guard result.status == 0, statuses.contains("DECRYPTION_OKAY"), statuses.isDisjoint(with: ["DECRYPTION_FAILED", "BADMDC"]) else {
            var output = result.output
            wipe(&output)
            var messages = lines.filter { !$0.hasPrefix(statusPrefix) }.map { $0.hasPrefix("gpg: ") ? String($0.dropFirst(5)) : String($0) }
            if messages.isEmpty {
                let told = statuses.intersection(["NODATA", "DECRYPTION_FAILED", "BADMDC", "NO_SECKEY"]).sorted()
                messages = ["it reported no successful decryption" + (told.isEmpty ? "" : " (\(told.joined(separator: ", ")))")]
            }
            let message = messages.joined(separator: "; ")
            throw .failed(status: result.status, message: message.count > 300 ? String(message.prefix(300)) + "…" : message)
        }
        return result.output
    }
}
