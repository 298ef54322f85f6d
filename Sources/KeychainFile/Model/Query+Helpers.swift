// Shorthands for the common queries, in the spirit of Apple's query dictionaries.
//
// Each is typically one call of a lookup loop, so it makes its dictionary at its final size and sets only the
// attributes given: growing the dictionary insert by insert, and hashing the attributes left out, were half
// the cost of building a query (Docs/Performance.md).

extension Query {
    /// A query for generic passwords, matching the given fields (`nil` matches anything).
    ///
    /// For example:
    /// ```swift
    /// let query = Query.genericPassword(service: "mail", account: "ann")
    /// ```
    ///
    /// - Parameters:
    ///   - service: The service, or `nil`.
    ///   - account: The account, or `nil`.
    ///   - accessGroup: The access group, or `nil`.
    ///   - label: The label, or `nil`.
    /// - Returns: The query, returning attributes of every match.
    public static func genericPassword(
        service: String? = nil, account: String? = nil, accessGroup: String? = nil, label: String? = nil
    ) -> Query {
        var values = [Attribute: AttributeValue](minimumCapacity: 4)
        if let service { values[.service] = .string(service) }
        if let account { values[.account] = .string(account) }
        if let accessGroup { values[.accessGroup] = .string(accessGroup) }
        if let label { values[.label] = .string(label) }
        return Query(.genericPassword, attributes: values)
    }

    /// A query for internet passwords, matching the given fields (`nil` matches anything).
    ///
    /// For example:
    /// ```swift
    /// let query = Query.internetPassword(server: "example.com", account: "ann", protocolType: .https)
    /// ```
    ///
    /// - Parameters:
    ///   - server: The server, or `nil`.
    ///   - account: The account, or `nil`.
    ///   - securityDomain: The security domain, or `nil`.
    ///   - protocolType: The protocol, or `nil`.
    ///   - authenticationType: The authentication type, or `nil`.
    ///   - port: The port, or `nil`.
    ///   - path: The path, or `nil`.
    ///   - accessGroup: The access group, or `nil`.
    /// - Returns: The query, returning attributes of every match.
    public static func internetPassword(
        server: String? = nil, account: String? = nil, securityDomain: String? = nil,
        protocolType: InternetProtocol? = nil, authenticationType: InternetAuthenticationType? = nil,
        port: UInt16? = nil, path: String? = nil, accessGroup: String? = nil
    ) -> Query {
        var values = [Attribute: AttributeValue](minimumCapacity: 8)
        if let server { values[.server] = .string(server) }
        if let account { values[.account] = .string(account) }
        if let securityDomain { values[.securityDomain] = .string(securityDomain) }
        if let protocolType { values[.protocolType] = .integer(Int64(protocolType.rawValue)) }
        if let authenticationType { values[.authenticationType] = .integer(Int64(authenticationType.rawValue)) }
        if let port { values[.port] = .integer(Int64(port)) }
        if let path { values[.path] = .string(path) }
        if let accessGroup { values[.accessGroup] = .string(accessGroup) }
        return Query(.internetPassword, attributes: values)
    }

    /// A query for certificates, matching the given fields (`nil` matches anything).
    ///
    /// For example:
    /// ```swift
    /// let query = Query.certificate(issuer: certificate.issuer, serialNumber: certificate.serialNumber)
    /// ```
    ///
    /// - Parameters:
    ///   - issuer: The DER of the issuer Name, or `nil`.
    ///   - serialNumber: The serial number's content octets, or `nil`.
    ///   - subject: The DER of the subject Name, or `nil`.
    ///   - label: The label, or `nil`.
    /// - Returns: The query, returning attributes of every match.
    public static func certificate(
        issuer: [UInt8]? = nil, serialNumber: [UInt8]? = nil, subject: [UInt8]? = nil, label: String? = nil
    ) -> Query {
        var values = [Attribute: AttributeValue](minimumCapacity: 4)
        if let issuer { values[.issuer] = .bytes(issuer) }
        if let serialNumber { values[.serialNumber] = .bytes(serialNumber) }
        if let subject { values[.subject] = .bytes(subject) }
        if let label { values[.label] = .string(label) }
        return Query(.certificate, attributes: values)
    }

    /// A query for keys, matching the given fields (`nil` matches anything).
    ///
    /// For example:
    /// ```swift
    /// let query = Query.key(keyClass: .privateKey, applicationTag: Array("com.example.signing".utf8))
    /// ```
    ///
    /// - Parameters:
    ///   - keyClass: The key class, or `nil`.
    ///   - applicationLabel: The application label, or `nil`.
    ///   - applicationTag: The application tag, or `nil`.
    ///   - keyType: The key type, or `nil`.
    /// - Returns: The query, returning attributes of every match.
    public static func key(
        keyClass: KeyClass? = nil, applicationLabel: [UInt8]? = nil, applicationTag: [UInt8]? = nil,
        keyType: KeyType? = nil
    ) -> Query {
        var values = [Attribute: AttributeValue](minimumCapacity: 4)
        if let keyClass { values[.keyClass] = .integer(keyClass.rawValue) }
        if let applicationLabel { values[.applicationLabel] = .bytes(applicationLabel) }
        if let applicationTag { values[.applicationTag] = .bytes(applicationTag) }
        if let keyType { values[.keyType] = .integer(keyType.rawValue) }
        return Query(.key, attributes: values)
    }

    /// A query for identities, matching the given label (`nil` matches any).
    ///
    /// For example:
    /// ```swift
    /// let query = Query.identity(label: "Ann")
    /// ```
    ///
    /// - Parameter label: The label, or `nil`.
    /// - Returns: The query, returning attributes of every match.
    public static func identity(label: String? = nil) -> Query {
        Query(.identity, attributes: label.map { [.label: .string($0)] } ?? [:])
    }
}
