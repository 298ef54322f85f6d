extension Keychain {
    /// The format version this library writes (SPEC.md §12): new files, and every rewrite of an older file, are
    /// of this version. It reads every earlier version too. `kcf --version` prints it.
    ///
    /// ```swift
    /// print("writes format version \(Keychain.formatVersion)")   // 2
    /// ```
    public static var formatVersion: Int { Int(FileHeaderV2.version) }
}
