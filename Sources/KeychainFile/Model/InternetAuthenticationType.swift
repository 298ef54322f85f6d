/// The authentication scheme of an internet password, as Apple's four-character `SecAuthenticationType`
/// codes.
///
/// The static members are Apple's codes, read as big-endian numbers (so ``default`` is 0x64666C74, as in
/// SPEC.md §8.2; Apple's C constants hold the same four bytes swapped on little-endian machines). Any other
/// code can be made with ``init(fourCharacterCode:)`` or ``init(rawValue:)``. ``any`` (0) is the default.
///
/// For example:
/// ```swift
/// var item = InternetPassword(server: "example.com", account: "ann", authenticationType: .htmlForm)
/// item.authenticationType = try InternetAuthenticationType(fourCharacterCode: "oaut")
/// ```
public struct InternetAuthenticationType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The four-character code as a big-endian `UInt32`.
    public let rawValue: UInt32

    /// Creates an authentication type from its numeric code.
    ///
    /// - Parameter rawValue: The code, such as 0x64666C74 for `dflt`.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Creates an authentication type from its four characters.
    ///
    /// - Parameter fourCharacterCode: Exactly four printable ASCII characters, such as `"dflt"`.
    /// - Throws: `KeychainError.invalidParameter` for anything else.
    public init(fourCharacterCode: String) throws(KeychainError) {
        rawValue = try FourCharacterCode.value(of: fourCharacterCode, what: "authentication type")
    }

    /// The four characters, or the value in hexadecimal when they are not printable.
    public var description: String { FourCharacterCode.string(of: rawValue) }

    private init(_ code: StaticString) { rawValue = FourCharacterCode.value(code) }

    /// Any authentication type (0), `kSecAuthenticationTypeAny`.
    public static let any = InternetAuthenticationType(rawValue: 0)
    /// The default scheme for the protocol, `'dflt'`.
    public static let `default` = InternetAuthenticationType("dflt")
    /// HTTP basic authentication, `'http'`.
    public static let httpBasic = InternetAuthenticationType("http")
    /// HTTP digest authentication, `'httd'`.
    public static let httpDigest = InternetAuthenticationType("httd")
    /// An HTML form, `'form'`.
    public static let htmlForm = InternetAuthenticationType("form")
    /// Windows NT LAN Manager, `'ntlm'`.
    public static let ntlm = InternetAuthenticationType("ntlm")
    /// Microsoft Network default, `'msna'`.
    public static let msn = InternetAuthenticationType("msna")
    /// Distributed Password Authentication, `'dpaa'`.
    public static let dpa = InternetAuthenticationType("dpaa")
    /// Remote Password Authentication, `'rpaa'`.
    public static let rpa = InternetAuthenticationType("rpaa")
}
