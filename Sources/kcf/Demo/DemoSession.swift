import KeychainCrypto
import KeychainFile

/// The demo's keychain and the items it stores, with the steps that create, add and query.
struct DemoSession {
    let path: String
    var keychain: Keychain
    var narrator = DemoNarrator()

    static let service = "mail.example.com"
    static let server = "example.com"
    static let account = "ann"
    static let keyTag = Array("com.example.demo.aes".utf8)
    /// Apple's kSecAttrKeyTypeAES (CSSM_ALGID_AES, 0x80000001).
    static let aes = KeyType(rawValue: 0x8000_0001)

    /// The symmetric key's bytes: random, made for this run.
    let symmetricKey: [UInt8] = (0..<32).map { _ in UInt8.random(in: 0...255) }

    /// Step 1: creates the keychain.
    init(path: String) throws(CommandError) {
        self.path = path
        narrator.step("Create a keychain", command: "kcf create-keychain --insecure-iterations \(DemoCommand.iterations) \(path)")
        let options = Keychain.CreationOptions(passwordIterations: .insecureForTesting(DemoCommand.iterations))
        keychain = try keychainCall { () throws(KeychainError) in
            try Keychain.create(at: path, credential: .password(DemoCommand.password), options: options)
        }
        narrator.detail("path", path.quotedForDemo)
        narrator.detail("password", "\(DemoCommand.password.quotedForDemo) (a fixed demo password, shown because this keychain is thrown away)")
        narrator.detail("PBKDF2", "\(DemoCommand.iterations) iterations — INSECURE, for the demo only (kcf create-keychain uses 600,000)")
        narrator.detail("head", "\(keychain.head) (epoch.sequence.chain value: a new file, no records yet)")
    }

    /// Step 2: one item of every class; the certificate and its private key as one identity.
    mutating func addOneOfEach() throws(CommandError) {
        narrator.step("Add one item of every class", command: "kcf add-generic-password -a ann -s mail.example.com -w   (and the others)")
        let generic = GenericPassword(service: Self.service, account: Self.account, password: "first mail password", label: "Ann's mail")
        let internet = InternetPassword(server: Self.server, account: Self.account, password: "web password",
                                        protocolType: .https, authenticationType: .htmlForm, port: 443, path: "/login")
        let identity = try demoIdentity()
        let key = Key(keyClass: .symmetric, applicationTag: Self.keyTag, keyType: Self.aes, keySizeInBits: 256,
                      label: "Demo AES-256 key", canEncrypt: true, canDecrypt: true, value: symmetricKey)
        try keychainCall { () throws(KeychainError) in
            try keychain.add(generic)
            try keychain.add(internet)
            try keychain.add(identity)
            try keychain.add(key)
        }
        narrator.detail("generic password", "service \(Self.service.quotedForDemo), account \(Self.account.quotedForDemo)")
        narrator.detail("internet password", "https://\(Self.server):443/login, account \(Self.account.quotedForDemo), HTML form")
        narrator.detail("certificate", "\((identity.certificate.label ?? "").quotedForDemo), EC P-256, \(identity.certificate.der?.count ?? 0) bytes of DER")
        narrator.detail("private key", "EC P-256, application label = the certificate's public key hash \(Hex.lower(identity.privateKey.applicationLabel))")
        narrator.detail("symmetric key", "AES-256, 32 random bytes, tag \(String(decoding: Self.keyTag, as: UTF8.self).quotedForDemo)")
        narrator.detail("items", "\(keychain.count), written as 4 records (the identity's two items in one); head \(keychain.head)")
    }

    /// The embedded certificate and its private key, checked to belong together.
    private func demoIdentity() throws(CommandError) -> Identity {
        let certificate = try keychainCall { () throws(KeychainError) in
            try Certificate(der: DemoFixtures.certificateDER, label: "Serial with leading zero")
        }
        let publicKeyHash = Array(Insecure.SHA1.hash(data: DemoFixtures.privateKeyX963.prefix(65)))
        guard publicKeyHash == certificate.publicKeyHash else {
            throw .failed("the embedded private key does not belong to the embedded certificate")
        }
        let key = Key(keyClass: .privateKey, keyType: .ellipticCurve, keySizeInBits: 256, label: "Serial with leading zero",
                      canSign: true, value: DemoFixtures.privateKeyX963)
        return try keychainCall { () throws(KeychainError) in try Identity(certificate: certificate, privateKey: key) }
    }

    /// Step 3: finds every item again and reads its secret.
    mutating func query() throws(CommandError) {
        narrator.step("Query them", command: "kcf find-generic-password -a ann -s mail.example.com -w")
        let keychain = self.keychain
        let generic = try keychainCall { () throws(KeychainError) in
            try keychain.find(GenericPassword.self, matching: .genericPassword(service: Self.service, account: Self.account))[0]
        }
        narrator.detail("generic password", "secret \((generic.passwordString ?? "").quotedForDemo), label \((generic.label ?? "").quotedForDemo)")
        let internet = try keychainCall { () throws(KeychainError) in
            try keychain.find(InternetPassword.self, matching: .internetPassword(server: Self.server, protocolType: .https))[0]
        }
        narrator.detail("internet password", "secret \((internet.passwordString ?? "").quotedForDemo), port \(internet.port), "
            + "protocol \(internet.protocolType), authentication \(internet.authenticationType)")
        // The codes just printed, explained: Apple's keychain stores four characters, kcf also takes names.
        let protocolName = FourCharacterCodeNames.protocols.name(of: internet.protocolType.rawValue) ?? "?"
        let authenticationName = FourCharacterCodeNames.authenticationTypes.name(of: internet.authenticationType.rawValue) ?? "?"
        narrator.detail("code \(internet.protocolType)", "the protocol HTTPS as Apple's keychain stores it; kcf takes -r \(protocolName) or -r \(internet.protocolType)")
        narrator.detail("code \(internet.authenticationType)", "a login through an HTML form; kcf takes -t \(authenticationName) or -t \(internet.authenticationType)")
        let identities = try keychainCall { () throws(KeychainError) in try keychain.findIdentities() }
        let identity = identities[0]
        narrator.detail("identity", "\(identities.count) found: certificate \((identity.certificate.label ?? "").quotedForDemo) + its private key (\(identity.privateKey.value?.count ?? 0) bytes)")
        let key = try keychainCall { () throws(KeychainError) in
            try keychain.find(Key.self, matching: .key(keyClass: .symmetric, applicationTag: Self.keyTag))[0]
        }
        narrator.detail("symmetric key", "\(key.value?.count ?? 0) bytes, identical to those stored: \(key.value == symmetricKey ? "yes" : "NO")")
        guard key.value == symmetricKey, generic.passwordString == "first mail password" else {
            throw .failed("an item read back differs from what was stored")
        }
    }
}
