// Shorthands for the common queries, in the spirit of Apple's query dictionaries.

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
        var values: [Attribute: AttributeValue] = [:]
        values[.service] = service.map(AttributeValue.string)
        values[.account] = account.map(AttributeValue.string)
        values[.accessGroup] = accessGroup.map(AttributeValue.string)
        values[.label] = label.map(AttributeValue.string)
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
        var values: [Attribute: AttributeValue] = [:]
        values[.server] = server.map(AttributeValue.string)
        values[.account] = account.map(AttributeValue.string)
        values[.securityDomain] = securityDomain.map(AttributeValue.string)
        values[.protocolType] = protocolType.map { .integer(Int64($0.rawValue)) }
        values[.authenticationType] = authenticationType.map { .integer(Int64($0.rawValue)) }
        values[.port] = port.map { .integer(Int64($0)) }
        values[.path] = path.map(AttributeValue.string)
        values[.accessGroup] = accessGroup.map(AttributeValue.string)
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
        var values: [Attribute: AttributeValue] = [:]
        values[.issuer] = issuer.map(AttributeValue.bytes)
        values[.serialNumber] = serialNumber.map(AttributeValue.bytes)
        values[.subject] = subject.map(AttributeValue.bytes)
        values[.label] = label.map(AttributeValue.string)
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
        var values: [Attribute: AttributeValue] = [:]
        values[.keyClass] = keyClass.map { .integer($0.rawValue) }
        values[.applicationLabel] = applicationLabel.map(AttributeValue.bytes)
        values[.applicationTag] = applicationTag.map(AttributeValue.bytes)
        values[.keyType] = keyType.map { .integer($0.rawValue) }
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
