// Values of kSecAttrProtocol and kSecAttrAuthenticationType, with Apple's string values (four-character
// codes). Source: Apple's Security framework, `Security/OSX/sec/Security/SecItemConstants.c` (repository
// apple-open-source/macos, commit 04b1b654a84a3c15e1420ab7913cbf701fa74cbc).

// MARK: kSecAttrProtocol

/// FTP (`"ftp "`).
public let kSecAttrProtocolFTP = "ftp "
/// FTP account (`"ftpa"`).
public let kSecAttrProtocolFTPAccount = "ftpa"
/// HTTP (`"http"`).
public let kSecAttrProtocolHTTP = "http"
/// IRC (`"irc "`).
public let kSecAttrProtocolIRC = "irc "
/// NNTP (`"nntp"`).
public let kSecAttrProtocolNNTP = "nntp"
/// POP3 (`"pop3"`).
public let kSecAttrProtocolPOP3 = "pop3"
/// SMTP (`"smtp"`).
public let kSecAttrProtocolSMTP = "smtp"
/// SOCKS (`"sox "`).
public let kSecAttrProtocolSOCKS = "sox "
/// IMAP (`"imap"`).
public let kSecAttrProtocolIMAP = "imap"
/// LDAP (`"ldap"`).
public let kSecAttrProtocolLDAP = "ldap"
/// AFP over AppleTalk (`"atlk"`).
public let kSecAttrProtocolAppleTalk = "atlk"
/// AFP over TCP (`"afp "`).
public let kSecAttrProtocolAFP = "afp "
/// Telnet (`"teln"`).
public let kSecAttrProtocolTelnet = "teln"
/// SSH (`"ssh "`).
public let kSecAttrProtocolSSH = "ssh "
/// FTP over TLS (`"ftps"`).
public let kSecAttrProtocolFTPS = "ftps"
/// HTTP over TLS (`"htps"`).
public let kSecAttrProtocolHTTPS = "htps"
/// HTTP proxy (`"htpx"`).
public let kSecAttrProtocolHTTPProxy = "htpx"
/// HTTPS proxy (`"htsx"`).
public let kSecAttrProtocolHTTPSProxy = "htsx"
/// FTP proxy (`"ftpx"`).
public let kSecAttrProtocolFTPProxy = "ftpx"
/// SMB (`"smb "`).
public let kSecAttrProtocolSMB = "smb "
/// RTSP (`"rtsp"`).
public let kSecAttrProtocolRTSP = "rtsp"
/// RTSP proxy (`"rtsx"`).
public let kSecAttrProtocolRTSPProxy = "rtsx"
/// DAAP (`"daap"`).
public let kSecAttrProtocolDAAP = "daap"
/// Remote Apple Events (`"eppc"`).
public let kSecAttrProtocolEPPC = "eppc"
/// IPP (`"ipp "`).
public let kSecAttrProtocolIPP = "ipp "
/// NNTP over TLS (`"ntps"`).
public let kSecAttrProtocolNNTPS = "ntps"
/// LDAP over TLS (`"ldps"`).
public let kSecAttrProtocolLDAPS = "ldps"
/// Telnet over TLS (`"tels"`).
public let kSecAttrProtocolTelnetS = "tels"
/// IMAP over TLS (`"imps"`).
public let kSecAttrProtocolIMAPS = "imps"
/// IRC over TLS (`"ircs"`).
public let kSecAttrProtocolIRCS = "ircs"
/// POP3 over TLS (`"pops"`).
public let kSecAttrProtocolPOP3S = "pops"

// MARK: kSecAttrAuthenticationType

/// Windows NT LAN Manager (`"ntlm"`).
public let kSecAttrAuthenticationTypeNTLM = "ntlm"
/// Microsoft Network default (`"msna"`).
public let kSecAttrAuthenticationTypeMSN = "msna"
/// Distributed Password Authentication (`"dpaa"`).
public let kSecAttrAuthenticationTypeDPA = "dpaa"
/// Remote Password Authentication (`"rpaa"`).
public let kSecAttrAuthenticationTypeRPA = "rpaa"
/// HTTP basic authentication (`"http"`).
public let kSecAttrAuthenticationTypeHTTPBasic = "http"
/// HTTP digest authentication (`"httd"`).
public let kSecAttrAuthenticationTypeHTTPDigest = "httd"
/// An HTML form (`"form"`).
public let kSecAttrAuthenticationTypeHTMLForm = "form"
/// The protocol's default scheme (`"dflt"`).
public let kSecAttrAuthenticationTypeDefault = "dflt"
