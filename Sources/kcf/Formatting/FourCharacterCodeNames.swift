import KeychainFile

/// Names for the four-character codes of internet passwords' protocols and authentication types, so that
/// `-r https` means what `-r htps` does, and JSON output says `"https"`.
///
/// A name of four characters or fewer is always the same as its own code (padded with spaces: `ftp` is
/// `ftp `), so a word never means one thing as a name and another as a code — but for ``zeroName``: 0 is no
/// code, and `any` is Apple's name for it (`kSecProtocolTypeAny`, `kSecAuthenticationTypeAny`: none given).
struct FourCharacterCodeNames: Sendable {
    /// The name of 0, the value of an internet password whose protocol or authentication type was not given.
    static let zeroName = "any"

    /// What the codes are of, for messages: "protocol".
    let what: String
    /// Each name and its code, in the order `kcf help` lists them.
    let entries: [(name: String, code: UInt32)]

    /// "a" or "an", before ``what``.
    private var article: String { what.first.map { "aeiou".contains($0) } == true ? "an" : "a" }

    /// The names, in order.
    var names: [String] { entries.map(\.name) }

    /// The code `text` means: a name (any case), ``zeroName`` for 0, else a four-character code of 1 to 4
    /// printable ASCII characters, padded with spaces.
    ///
    /// - Throws: `CommandError.usage` naming a few of the names when `text` is neither.
    func code(for text: String) throws(CommandError) -> UInt32 {
        if let entry = entries.first(where: { $0.name == text.lowercased() }) { return entry.code }
        if text.lowercased() == Self.zeroName { return 0 }
        let bytes = Array(text.utf8)
        guard (1...4).contains(bytes.count), bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw .usage("\"\(text)\" is neither \(article) \(what) name (\(names.prefix(6).joined(separator: ", ")), …) nor a four-character code")
        }
        return FourCharacterCodeNames.value(of: bytes + [UInt8](repeating: 0x20, count: 4 - bytes.count))
    }

    /// The name of `code` (``zeroName`` for 0), or `nil` when it has none.
    func name(of code: UInt32) -> String? {
        code == 0 ? Self.zeroName : entries.first { $0.code == code }?.name
    }

    /// Apple's protocols (`kSecAttrProtocol…`).
    static let protocols = FourCharacterCodeNames(what: "protocol", entries: [
        ("https", InternetProtocol.https.rawValue), ("http", InternetProtocol.http.rawValue),
        ("ftp", InternetProtocol.ftp.rawValue), ("ftps", InternetProtocol.ftps.rawValue),
        ("ssh", InternetProtocol.ssh.rawValue), ("imap", InternetProtocol.imap.rawValue),
        ("imaps", InternetProtocol.imaps.rawValue), ("pop3", InternetProtocol.pop3.rawValue),
        ("pop3s", InternetProtocol.pop3S.rawValue), ("smtp", InternetProtocol.smtp.rawValue),
        ("ldap", InternetProtocol.ldap.rawValue), ("ldaps", InternetProtocol.ldaps.rawValue),
        ("telnet", InternetProtocol.telnet.rawValue), ("telnets", InternetProtocol.telnetS.rawValue),
        ("irc", InternetProtocol.irc.rawValue), ("ircs", InternetProtocol.ircs.rawValue),
        ("nntp", InternetProtocol.nntp.rawValue), ("nntps", InternetProtocol.nntps.rawValue),
        ("smb", InternetProtocol.smb.rawValue), ("cifs", InternetProtocol.cifs.rawValue),
        ("afp", InternetProtocol.afp.rawValue), ("appletalk", InternetProtocol.appleTalk.rawValue),
        ("socks", InternetProtocol.socks.rawValue), ("http-proxy", InternetProtocol.httpProxy.rawValue),
        ("https-proxy", InternetProtocol.httpsProxy.rawValue), ("ftp-proxy", InternetProtocol.ftpProxy.rawValue),
        ("ftp-account", InternetProtocol.ftpAccount.rawValue), ("rtsp", InternetProtocol.rtsp.rawValue),
        ("rtsp-proxy", InternetProtocol.rtspProxy.rawValue), ("daap", InternetProtocol.daap.rawValue),
        ("eppc", InternetProtocol.eppc.rawValue), ("ipp", InternetProtocol.ipp.rawValue),
        ("cvs-pserver", InternetProtocol.cvsPserver.rawValue), ("svn", InternetProtocol.svn.rawValue),
    ])

    /// Apple's authentication types (`kSecAttrAuthenticationType…`).
    static let authenticationTypes = FourCharacterCodeNames(what: "authentication type", entries: [
        ("default", InternetAuthenticationType.default.rawValue), ("html-form", InternetAuthenticationType.htmlForm.rawValue),
        ("http-basic", InternetAuthenticationType.httpBasic.rawValue), ("http-digest", InternetAuthenticationType.httpDigest.rawValue),
        ("ntlm", InternetAuthenticationType.ntlm.rawValue), ("microsoft-network", InternetAuthenticationType.msn.rawValue),
        ("distributed-password", InternetAuthenticationType.dpa.rawValue), ("remote-password", InternetAuthenticationType.rpa.rawValue),
    ])

    /// Four bytes read as a big-endian number.
    private static func value(of bytes: [UInt8]) -> UInt32 {
        bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
}
