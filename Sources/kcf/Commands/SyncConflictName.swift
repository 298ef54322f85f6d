/// The name of a conflict copy a file-syncing tool left beside a file, and the name of that file.
///
/// - Syncthing: `NAME.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.EXT` (DEVICE is 7 letters or digits) for `NAME.EXT`;
/// - Nextcloud and ownCloud: `NAME (conflicted copy YYYY-MM-DD HHMMSS).EXT`;
/// - Dropbox: `NAME (WHO's conflicted copy YYYY-MM-DD).EXT`, also with ` (N)` after the date.
///
/// Names are compared as they are: a file whose copy the tool named otherwise is not found.
struct SyncConflictName: Equatable {
    /// The conflict copy's file name.
    let copy: String
    /// The name of the file it is a conflict copy of.
    let original: String
    /// The tool that names copies so.
    let tool: String

    /// A copy of `original`, named so by `tool`.
    init(copy: String, original: String, tool: String) {
        (self.copy, self.original, self.tool) = (copy, original, tool)
    }

    /// The name `copy` is a conflict copy of, or `nil` when it is not named as one.
    init?(_ copy: String) {
        if let original = Self.syncthingOriginal(copy) {
            (self.copy, self.original, tool) = (copy, original, "Syncthing")
        } else if let original = Self.conflictedCopyOriginal(copy) {
            (self.copy, self.original, tool) = (copy, original, "Nextcloud, ownCloud or Dropbox")
        } else {
            return nil
        }
    }

    /// `NAME.sync-conflict-YYYYMMDD-HHMMSS-DEVICE[.EXT]` → `NAME[.EXT]`.
    private static func syncthingOriginal(_ name: String) -> String? {
        let marker = ".sync-conflict-"
        guard let range = name.range(of: marker, options: .backwards) else { return nil }
        let stem = name[..<range.lowerBound]
        let rest = name[range.upperBound...]
        // 8 digits, '-', 6 digits, '-', 7 letters or digits, then the end or '.' and the extension.
        let fields = rest.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard !stem.isEmpty, fields.count == 3, fields[0].count == 8, fields[0].allSatisfy(\.isASCIIDigit),
              fields[1].count == 6, fields[1].allSatisfy(\.isASCIIDigit) else { return nil }
        let device = fields[2].prefix { $0 != "." }
        guard device.count == 7, device.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else { return nil }
        let suffix = fields[2].dropFirst(device.count)
        guard suffix.isEmpty || suffix.count > 1 else { return nil }
        return String(stem) + String(suffix)
    }

    /// `NAME (… conflicted copy …)[.EXT]` → `NAME[.EXT]`: the parenthesis closes right before the extension (or
    /// the end), and its text holds "conflicted copy".
    private static func conflictedCopyOriginal(_ name: String) -> String? {
        guard let conflicted = name.range(of: "conflicted copy", options: .backwards),
              let start = name.range(of: " (", options: .backwards, range: name.startIndex..<conflicted.lowerBound)
        else { return nil }
        // The parenthesis that closes `start`'s: Dropbox may nest " (1)" in it.
        var depth = 0
        var close: String.Index? = nil
        for index in name[start.upperBound...].indices {
            if name[index] == "(" { depth += 1 }
            if name[index] == ")" {
                if depth == 0 { close = index; break }
                depth -= 1
            }
        }
        guard let close, close > conflicted.lowerBound else { return nil }
        let suffix = name[name.index(after: close)...]
        guard suffix.isEmpty || (suffix.hasPrefix(".") && suffix.count > 1 && !suffix.contains(" ")) else { return nil }
        let stem = name[..<start.lowerBound]
        guard !stem.isEmpty else { return nil }
        return String(stem) + String(suffix)
    }
}

extension Character {
    /// An ASCII digit, 0 to 9.
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
