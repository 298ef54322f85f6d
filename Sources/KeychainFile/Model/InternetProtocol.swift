/// The protocol of an internet password, as Apple's four-character `SecProtocolType` codes.
///
/// The static members are Apple's codes; any other code can be made with ``init(fourCharacterCode:)`` or
/// ``init(rawValue:)``. ``any`` (0) is the default.
///
/// For example:
/// ```swift
/// let item = InternetPassword(server: "example.com", account: "ann", protocolType: .https, port: 443)
/// let custom = try InternetProtocol(fourCharacterCode: "xmpp")
/// print(InternetProtocol.https)  // htps
/// ```
public struct InternetProtocol: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The four-character code as a big-endian `UInt32`.
    public let rawValue: UInt32

    /// Creates a protocol from its numeric code.
    ///
    /// - Parameter rawValue: The code, such as 0x68747073 for `htps`.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Creates a protocol from its four characters.
    ///
    /// - Parameter fourCharacterCode: Exactly four printable ASCII characters, such as `"htps"`.
    /// - Throws: `KeychainError.invalidParameter` for anything else.
    public init(fourCharacterCode: String) throws(KeychainError) {
        rawValue = try FourCharacterCode.value(of: fourCharacterCode, what: "protocol")
    }

    /// The four characters, or the value in hexadecimal when they are not printable.
    public var description: String { FourCharacterCode.string(of: rawValue) }

    private init(_ code: StaticString) { rawValue = FourCharacterCode.value(code) }

    /// Any protocol (0), `kSecProtocolTypeAny`.
    public static let any = InternetProtocol(rawValue: 0)
    /// FTP, `'ftp '`.
    public static let ftp = InternetProtocol("ftp ")
    /// FTP account (client side), `'ftpa'`.
    public static let ftpAccount = InternetProtocol("ftpa")
    /// HTTP, `'http'`.
    public static let http = InternetProtocol("http")
    /// IRC, `'irc '`.
    public static let irc = InternetProtocol("irc ")
    /// NNTP, `'nntp'`.
    public static let nntp = InternetProtocol("nntp")
    /// POP3, `'pop3'`.
    public static let pop3 = InternetProtocol("pop3")
    /// SMTP, `'smtp'`.
    public static let smtp = InternetProtocol("smtp")
    /// SOCKS, `'sox '`.
    public static let socks = InternetProtocol("sox ")
    /// IMAP, `'imap'`.
    public static let imap = InternetProtocol("imap")
    /// LDAP, `'ldap'`.
    public static let ldap = InternetProtocol("ldap")
    /// AFP over AppleTalk, `'atlk'`.
    public static let appleTalk = InternetProtocol("atlk")
    /// AFP over TCP, `'afp '`.
    public static let afp = InternetProtocol("afp ")
    /// Telnet, `'teln'`.
    public static let telnet = InternetProtocol("teln")
    /// SSH, `'ssh '`.
    public static let ssh = InternetProtocol("ssh ")
    /// FTP over TLS, `'ftps'`.
    public static let ftps = InternetProtocol("ftps")
    /// HTTP over TLS, `'htps'`.
    public static let https = InternetProtocol("htps")
    /// HTTP proxy, `'htpx'`.
    public static let httpProxy = InternetProtocol("htpx")
    /// HTTPS proxy, `'htsx'`.
    public static let httpsProxy = InternetProtocol("htsx")
    /// FTP proxy, `'ftpx'`.
    public static let ftpProxy = InternetProtocol("ftpx")
    /// CIFS, `'cifs'`.
    public static let cifs = InternetProtocol("cifs")
    /// SMB, `'smb '`.
    public static let smb = InternetProtocol("smb ")
    /// RTSP, `'rtsp'`.
    public static let rtsp = InternetProtocol("rtsp")
    /// RTSP proxy, `'rtsx'`.
    public static let rtspProxy = InternetProtocol("rtsx")
    /// DAAP, `'daap'`.
    public static let daap = InternetProtocol("daap")
    /// Remote Apple Events, `'eppc'`.
    public static let eppc = InternetProtocol("eppc")
    /// IPP, `'ipp '`.
    public static let ipp = InternetProtocol("ipp ")
    /// NNTP over TLS, `'ntps'`.
    public static let nntps = InternetProtocol("ntps")
    /// LDAP over TLS, `'ldps'`.
    public static let ldaps = InternetProtocol("ldps")
    /// Telnet over TLS, `'tels'`.
    public static let telnetS = InternetProtocol("tels")
    /// IMAP over TLS, `'imps'`.
    public static let imaps = InternetProtocol("imps")
    /// IRC over TLS, `'ircs'`.
    public static let ircs = InternetProtocol("ircs")
    /// POP3 over TLS, `'pops'`.
    public static let pop3S = InternetProtocol("pops")
    /// CVS pserver, `'cvsp'`.
    public static let cvsPserver = InternetProtocol("cvsp")
    /// Subversion, `'svn '`.
    public static let svn = InternetProtocol("svn ")
}
