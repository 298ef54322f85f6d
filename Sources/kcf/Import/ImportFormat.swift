/// The exports of other password stores that `kcf import` reads, by the name `-f` takes.
enum ImportFormat: String, CaseIterable {
    /// Bitwarden's CSV export (``BitwardenCSV``).
    case bitwardenCSV = "bitwarden-csv"
    /// 1Password's CSV export (``OnePasswordCSV``).
    case onePasswordCSV = "1password-csv"
    /// A `pass` password store, a directory (``PasswordStore``).
    case pass
    /// The text of macOS `security dump-keychain -d` (``SecurityDumpReader``).
    case dumpKeychain = "dump-keychain"
    /// A KeePass database, KDBX 4 (``KDBXReader``).
    case kdbx

    /// How many bytes of a file ``detect(_:)`` needs: more than any export's first line.
    static let detectionLength = 65_536

    /// The format of a file's first bytes when they are plainly one of these: text that starts as a dump does, a KeePass database's signature,
    /// or a CSV header with the columns of an export. `nil` otherwise (a certificate, a key, anything else).
    static func detect(_ bytes: [UInt8]) -> ImportFormat? {
        if bytes.starts(with: Array("keychain: ".utf8)) { return .dumpKeychain }
        if bytes.starts(with: KDBXHeader.signature1) { return .kdbx }
        var reader = CSVRecordReader(bytes: Array(bytes.prefix(detectionLength)))
        guard let header = try? reader.next() else { return nil }
        if BitwardenCSV.matches(header: header.fields) { return .bitwardenCSV }
        if OnePasswordCSV.matches(header: header.fields) { return .onePasswordCSV }
        return nil
    }

    /// What the format is, for messages.
    var title: String {
        switch self {
        case .bitwardenCSV: return "Bitwarden CSV export"
        case .onePasswordCSV: return "1Password CSV export"
        case .pass: return "pass password store"
        case .dumpKeychain: return "security dump-keychain text"
        case .kdbx: return "KeePass database"
        }
    }
}
