extension Keychain {
    /// The format version this library writes (SPEC.md §12): `kcf --version` prints it.
    ///
    /// ```swift
    /// print("writes format version \(Keychain.formatVersion)")   // 1
    /// ```
    public static var formatVersion: Int { Int(Format.version) }
}
