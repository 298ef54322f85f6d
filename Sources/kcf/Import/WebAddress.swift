import Foundation
import KeychainFile

/// A login's web address read as the primary key of an internet password: server, protocol, port and path,
/// as Apple's keychain keeps the passwords of web sites.
///
/// `https://www.example.com:8443/login?next=/` is server `www.example.com`, protocol `htps`, port 8443,
/// path `/login`. An address without a scheme (`example.com`, as password managers often hold them) has
/// protocol 0, "any": kcf does not guess one. A lone `/` is no path; the path is kept as written (percent
/// escapes and all). What an internet password has no place for — a query, a fragment, a user name or
/// password written in the address — is listed in ``dropped``.
struct WebAddress {
    /// The host, as written.
    let server: String
    /// The protocol's four-character code (`htps`), or 0 when the address has no scheme.
    let protocolCode: UInt32
    /// The port, or 0 when the address has none.
    let port: UInt16
    /// The path, or empty.
    let path: String
    /// The parts of the address not kept, such as "its query".
    let dropped: [String]

    /// Why an address cannot be an internet password's key.
    enum Unusable: Error {
        /// It has no host (such as `mailto:ann@example.com`), or is not an address at all.
        case noServer
        /// Its scheme is not a protocol the keychain has a code for (such as `androidapp://`).
        case unknownScheme(String)
        /// Its port is not a number from 1 to 65,535.
        case badPort
    }

    /// Reads `text` (surrounding spaces ignored).
    ///
    /// - Throws: ``Unusable`` when the address cannot be an internet password's key.
    init(_ text: String) throws(Unusable) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let components = URLComponents(string: Self.hasScheme(trimmed) ? trimmed : "//" + trimmed),
              let host = components.host, !host.isEmpty else { throw .noServer }
        var code: UInt32 = 0
        if let scheme = components.scheme {
            guard let known = FourCharacterCodeNames.protocols.entries.first(where: { $0.name == scheme.lowercased() }) else {
                throw .unknownScheme(scheme)
            }
            code = known.code
        }
        var port: UInt16 = 0
        if let number = components.port {
            guard let value = UInt16(exactly: number), value > 0 else { throw .badPort }
            port = value
        }
        var dropped: [String] = []
        if components.percentEncodedQuery != nil { dropped.append("its query") }
        if components.percentEncodedFragment != nil { dropped.append("its fragment") }
        if components.user != nil || components.password != nil { dropped.append("the user name or password written in it") }
        let path = components.percentEncodedPath
        self.server = host
        self.protocolCode = code
        self.port = port
        self.path = path == "/" ? "" : path
        self.dropped = dropped
    }

    /// Whether `text` starts with a scheme (`https:`, `mailto:`), rather than being a host with or without a
    /// port (`example.com`, `example.com:8080/login`), which a scheme's characters could also spell.
    static func hasScheme(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":") else { return false }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) }) else { return false }
        let after = text[text.index(after: colon)...]
        if after.hasPrefix("//") { return true }
        // host:port — digits up to a path, query, fragment or the end.
        let port = after.prefix { !"/?#".contains($0) }
        return port.isEmpty || !port.allSatisfy(\.isNumber)
    }

    /// The attributes of an internet password for this address.
    var attributes: [Attribute: AttributeValue] {
        var values: [Attribute: AttributeValue] = [.server: .string(server)]
        if protocolCode != 0 { values[.protocolType] = .integer(Int64(protocolCode)) }
        if port != 0 { values[.port] = .integer(Int64(port)) }
        if !path.isEmpty { values[.path] = .string(path) }
        return values
    }
}
