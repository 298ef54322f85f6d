import Foundation
@_spi(Fixtures) import KeychainFile
import KeychainCrypto
import KeychainTestSupport

/// The fixtures of `Fixtures/v1`, one function each, in the catalogue's order.
extension FixtureWriter {
    func workedExample(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 1)
        try fixture.add(GenericPassword(service: "example", account: "ann", password: "hunter2"))
        let bob = GenericPassword(service: "example", account: "bob", password: "swordfish")
        try fixture.transaction(adding: [(try bob.attributes, bob.value ?? [])],
                                deleting: .genericPassword(service: "example", account: "ann"))
        return opens(fixture, "SPEC.md §14: a put of ann's password, then a transaction that adds bob's and deletes ann's")
    }

    func empty(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 2)
        return opens(fixture, "a header and no records")
    }

    func genericPassword(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 3)
        var item = mailPassword()
        item.accessGroup = "group.example.mail"
        item.accessible = .afterFirstUnlockThisDeviceOnly
        item.generic = [0xde, 0xad, 0xbe, 0xef]
        item.itemDescription = "password"
        item.comment = "a comment with \"quotes\" and ünïcödé"
        item.creator = 0x6170_706c  // 'appl'
        item.itemType = 0x7061_7373  // 'pass'
        item.isInvisible = false
        item.isNegative = false
        try fixture.add(item)
        var synced = GenericPassword(service: "mail.example.com", account: "ann@example.com", password: "synced")
        synced.synchronizable = true
        try fixture.add(synced)
        return opens(fixture, "generic passwords with every attribute; one synchronizable twin")
    }

    func internetPassword(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 4)
        var item = InternetPassword(server: "www.example.com", account: "ann")
        item.securityDomain = "Example Realm"
        item.protocolType = .https
        item.authenticationType = .htmlForm
        item.port = 443
        item.path = "/login"
        item.label = "www.example.com (ann)"
        item.comment = "web login"
        item.value = Array("web-secret".utf8)
        try fixture.add(item)
        var ftp = InternetPassword(server: "ftp.example.com", account: "anonymous")
        ftp.protocolType = .ftp
        ftp.port = 21
        ftp.value = []
        try fixture.add(ftp)
        return opens(fixture, "internet passwords by server, protocol, port and path; one with an empty secret")
    }

    func certificate(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 5)
        var item = try Certificate(der: certificateDER())
        item.label = "Example certificate"
        try fixture.add(item)
        return opens(fixture, "a certificate; subject, issuer, serial number, key id and public key hash from its DER")
    }

    func key(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 6)
        var symmetric = Key(keyClass: .symmetric)
        symmetric.applicationTag = Array("com.example.key".utf8)
        symmetric.keyType = KeyType(rawValue: 2_147_483_649)
        symmetric.keySizeInBits = 256
        symmetric.effectiveKeySize = 256
        symmetric.isPermanent = true
        symmetric.canEncrypt = true
        symmetric.canDecrypt = true
        symmetric.canDerive = false
        symmetric.canSign = false
        symmetric.canVerify = false
        symmetric.canWrap = true
        symmetric.canUnwrap = true
        symmetric.label = "Data key"
        symmetric.value = (0..<32).map { UInt8($0) }
        try fixture.add(symmetric)
        var publicKey = Key(keyClass: .publicKey)
        publicKey.applicationLabel = [1, 2, 3, 4]
        publicKey.keyType = .ellipticCurve
        publicKey.keySizeInBits = 256
        publicKey.value = [0x04] + [UInt8](repeating: 0x11, count: 64)
        try fixture.add(publicKey)
        return opens(fixture, "a symmetric key with every flag, and a public key")
    }

    func identity(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 7)
        var certificate = try Certificate(der: certificateDER())
        certificate.label = "Identity"
        var privateKey = Key(keyClass: .privateKey)
        privateKey.keyType = .ellipticCurve
        privateKey.keySizeInBits = 256
        privateKey.label = "Identity"
        privateKey.value = [UInt8](repeating: 0x5a, count: 32)
        let identity = try Identity(certificate: certificate, privateKey: privateKey)
        try fixture.addAll([
            (try identity.certificate.attributes, identity.certificate.value ?? []),
            (try identity.privateKey.attributes, identity.privateKey.value ?? []),
        ])
        return opens(fixture, "an identity: a certificate and the private key whose application label is its public key hash, added as one transaction")
    }

    func thousandItems(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 8)
        for batch in 0..<10 {
            var items: [(ItemAttributes, [UInt8])] = []
            for index in 0..<100 {
                let number = batch * 100 + index
                var item = GenericPassword(service: "service\(number % 7)", account: "account\(number)", password: "secret \(number)")
                item.label = "item \(number)"
                items.append((try item.attributes, item.value ?? []))
            }
            try fixture.addAll(items)
        }
        for number in stride(from: 0, to: 1000, by: 13) {
            try fixture.update(Query.genericPassword(service: "service\(number % 7)", account: "account\(number)"),
                               setting: [.comment: .string("updated \(number)")], secret: Array("new secret \(number)".utf8))
        }
        for number in stride(from: 5, to: 1000, by: 17) {
            try fixture.delete(Query.genericPassword(service: "service\(number % 7)", account: "account\(number)"))
        }
        try fixture.update(Query.genericPassword(service: "service3"), setting: [.itemDescription: .string("group three")])
        for number in 1000..<1010 {
            try fixture.add(GenericPassword(service: "late", account: "account\(number)", password: "late \(number)"))
        }
        return opens(fixture, "1,000 items added in ten transactions, then single updates, deletes, a bulk update and late adds")
    }

    func nfcPassword(_ name: String) throws -> ManifestJSON {
        let decomposed = "Cafe\u{301} cre\u{300}me bru\u{302}le\u{301}e"
        let composed = "Caf\u{E9} cr\u{E8}me br\u{FB}l\u{E9}e"
        let fixture = try newKeychain(name, seed: 9, credential: .password(decomposed),
                                      credentialJSON: .object(["password": .string(decomposed)]))
        try fixture.add(mailPassword())
        return opens(fixture, "created with a password in decomposed form (NFD); the manifest gives it composed (NFC): a reader must normalise",
                     credentialJSON: .object(["password": .string(composed)]))
    }

    func rawKeyFixture(_ name: String) throws -> ManifestJSON {
        let json = ManifestJSON.object(["key": .string(hex(FixtureGenerator.rawKey))])
        let fixture = try newKeychain(name, seed: 10, credential: .key(SymmetricKey(data: FixtureGenerator.rawKey)), credentialJSON: json)
        try fixture.add(mailPassword())
        return opens(fixture, "one raw-key slot (HKDF), no password")
    }

    func twoKeySlots(_ name: String) throws -> ManifestJSON {
        let json = ManifestJSON.object(["key": .string(hex(FixtureGenerator.rawKey))])
        let fixture = try newKeychain(name, seed: 11, additional: [.key(SymmetricKey(data: FixtureGenerator.rawKey))])
        try fixture.add(mailPassword())
        return opens(fixture, "a password slot and a raw-key slot; the manifest opens it with the key (the second slot)",
                     credentialJSON: json)
    }

    func compacted(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 20)
        for index in 0..<6 {
            var item = GenericPassword(service: "svc", account: "user\(index)", password: "password \(index)")
            item.comment = "added \(index)"
            try fixture.add(item)
        }
        try fixture.update(Query.genericPassword(service: "svc", account: "user1"), setting: [.label: .string("changed")],
                           secret: Array("password 1, changed".utf8))
        try fixture.update(Query.genericPassword(service: "svc", account: "user2"), setting: [:], secret: Array("password 2, changed".utf8))
        try fixture.delete(Query.genericPassword(service: "svc", account: "user3"))
        try fixture.delete(Query.genericPassword(service: "svc", account: "user4"))
        try fixture.compact()
        try fixture.add(mailPassword())
        return opens(fixture, "six items added, two updated, two deleted, then compacted (SPEC.md §15.1: epoch 2, the four live items in one transaction record), then one more item added")
    }

    func credentialsChanged(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 21)
        try fixture.add(mailPassword())
        try fixture.addCredential(.key(SymmetricKey(data: FixtureGenerator.rawKey)))
        try fixture.changeCredentialKeepingKeys(from: Self.passwordCredential, to: .password(Self.newPassword))
        try fixture.add(GenericPassword(service: "svc", account: "after", password: "added after the changes"))
        return opens(fixture, "a raw-key slot added, then the password changed (SPEC.md §15.2): epoch 3, the new password in the first slot; opened with the new password",
                     credentialJSON: .object(["password": .string(Self.newPassword)]))
    }

    static let newPassword = "a new password, changed by rewriting the file"

    enum Cut { case frameHeader, middle, lastByte, zeroed, garbage, lengthFlip }

    func tornTail(_ name: String, cut: Cut) throws -> ManifestJSON {
        let fixture = try threeRecords(name, seed: 12)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
        let records = recordOffsets(of: bytes)
        let last = records[2]
        // The same seed writes the same first two records; that keychain gives the expected state.
        let twoRecords = try threeRecordsUpTo(2, seed: 12)
        guard twoRecords.bytes == Array(bytes[0..<last.lowerBound]) else {
            throw FixtureError("the two-record keychain is not a prefix of the three-record one")
        }
        let description: String
        let kept: Int
        switch cut {
        case .frameHeader:
            kept = last.lowerBound + 5
            description = "the file ends 5 bytes into the last record's frame header"
        case .middle:
            kept = last.lowerBound + last.count / 2
            description = "the file ends in the middle of the last record"
        case .lastByte:
            kept = last.upperBound - 1
            description = "the last record is missing its final byte"
        case .zeroed:
            kept = last.upperBound
            for index in last { bytes[index] = 0 }
            description = "the last record's space is zeros, as a crash can leave an unwritten extent"
        case .garbage:
            kept = last.upperBound
            var random = FixtureRandom(seed: 99)
            for index in last { bytes[index] = UInt8(truncatingIfNeeded: random.next() | 1) }
            description = "the last record's space holds non-zero garbage (stale data a crash can leave); no record follows it"
        case .lengthFlip:
            kept = last.upperBound
            bytes[last.lowerBound + 3] ^= 0x01
            description = "one bit of the last record's body length flipped; no plausible record follows, so it is a torn tail"
        }
        try Data(bytes[0..<kept]).write(to: URL(fileURLWithPath: fixture.path))
        return opens(twoRecords.fixture, description + "; it opens with the first two records",
                     tornTail: (last.lowerBound, kept - last.lowerBound), credentialJSON: fixture.credentialJSON)
    }

    /// A final transaction of three puts cut down to its first entry, with its entry count, length and
    /// length check rewritten to match: the entry count in every box's AAD (SPEC.md §7.2) makes its boxes fail,
    /// so the whole record is dropped as a torn tail and none of it is applied.
    func transactionCutShort(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 16)
        try fixture.add(GenericPassword(service: "tx", account: "first", password: "kept"))
        let before = fixture.expected
        let headBefore = fixture.headJSON()
        let items = try (0..<3).map { index -> (ItemAttributes, [UInt8]) in
            let item = GenericPassword(service: "tx", account: "entry\(index)", password: "entry \(index)")
            return (try item.attributes, item.value ?? [])
        }
        try fixture.addAll(items)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
        let records = recordOffsets(of: bytes)
        let last = records[1]
        // Walk the transaction: frame header 8, kind 1, sequence 8, entry count 4, then entries of
        // kind 1 ‖ attributes box field ‖ secret box field.
        func u32(_ at: Int) -> Int { Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]) }
        var position = last.lowerBound + 21
        position += 1
        position += 4 + u32(position)
        position += 4 + u32(position)
        let bodyLength = position - (last.lowerBound + 8)
        bytes = Array(bytes[0..<position])
        for (offset, value) in [(0, UInt32(bodyLength)), (4, UInt32(bodyLength) ^ 0xFFFF_FFFF), (17, 1)] {
            for index in 0..<4 { bytes[last.lowerBound + offset + index] = UInt8(truncatingIfNeeded: value >> UInt32(24 - 8 * index)) }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: fixture.path))
        let model = FixtureModel(expected: before)
        return opens(model: model, credentialJSON: fixture.credentialJSON, head: headBefore,
                     "a final transaction of three puts, cut after its first entry with its entry count, length and check rewritten; the authenticated entry count makes it fail, so it is dropped whole as a torn tail",
                     tornTail: (last.lowerBound, bytes.count - last.lowerBound))
    }

    enum Hostile { case duplicateKey, unknownDelete, classChange }

    /// A final record written with the key but meaningless: it must be `corrupted`, not a torn tail.
    func hostileFinalRecord(_ name: String, _ kind: Hostile) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 17)
        let reference = try fixture.add(GenericPassword(service: "svc", account: "ann", password: "first"))
        let size = try Data(contentsOf: URL(fileURLWithPath: fixture.path)).count
        var random = FixtureRandom(seed: 18)
        let description: String
        switch kind {
        case .duplicateKey:
            let copy = try GenericPassword(service: "svc", account: "ann", password: "second").attributes
                .setting(.creationDate, to: .date(fixture.clock.now)).setting(.modificationDate, to: .date(fixture.clock.now))
            try fixture.keychain.appendUnchecked([.put(id: ItemID(using: &random), attributes: copy, secret: [1])])
            description = "a final record, sealed with the key, adding a second item with the first one's primary key"
        case .unknownDelete:
            try fixture.keychain.appendUnchecked([.delete(id: ItemID(using: &random))])
            description = "a final record, sealed with the key, deleting an item that does not exist"
        case .classChange:
            var key = Key(keyClass: .symmetric)
            key.applicationTag = [1]
            let attributes = try key.attributes
                .setting(.creationDate, to: .date(fixture.clock.now)).setting(.modificationDate, to: .date(fixture.clock.now))
            try fixture.keychain.appendUnchecked([.put(id: reference.itemID, attributes: attributes, secret: [2])])
            description = "a final record, sealed with the key, turning a generic password into a key under the same item id"
        }
        let total = try Data(contentsOf: URL(fileURLWithPath: fixture.path)).count
        return fails(description + "; an authentic record that makes no sense is corruption even at the end of the file",
                     credential: fixture.credentialJSON, error: "corrupted", range: size..<total)
    }

    func wrongPassword(_ name: String) throws -> ManifestJSON {
        let fixture = try newKeychain(name, seed: 13)
        try fixture.add(mailPassword())
        return fails("opened with a password other than the one it was created with",
                     credential: .object(["password": .string("Correct horse battery staple")]), error: "wrongCredentials")
    }

    func notAKeychain(_ name: String) throws -> ManifestJSON {
        try Data("This is a text file, not a keychain.\n".utf8).write(to: URL(fileURLWithPath: path(name)))
        return fails("a text file", credential: Self.passwordJSON, error: "notAKeychain")
    }

    enum Damage {
        case headerEpoch, keySlot, frameLength, sealedAttributes, sealedSecret, tag
        case recordRemoved, recordsSwapped, recordDuplicated, recordSpliced, version, truncatedHeader
    }

    func damaged(_ name: String, _ damage: Damage) throws -> ManifestJSON {
        let fixture = try threeRecords(name, seed: 14)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixture.path)))
        let records = recordOffsets(of: bytes)
        let headerLength = records[0].lowerBound
        let first = records[0]
        // Offsets inside the first record: frame header (8), kind (1), sequence (8), then the attributes box
        // field (u32 length, 12-byte nonce, ciphertext, tag) and the secret box field.
        let attributesLength = Int(bytes[first.lowerBound + 17]) << 24 | Int(bytes[first.lowerBound + 18]) << 16
            | Int(bytes[first.lowerBound + 19]) << 8 | Int(bytes[first.lowerBound + 20])
        let attributesBox = (first.lowerBound + 21)..<(first.lowerBound + 21 + attributesLength)
        let secretBox = (attributesBox.upperBound + 4)..<first.upperBound
        var description: String
        var error = "corrupted"
        var range: Range<Int>? = nil
        var version: Int? = nil
        switch damage {
        case .headerEpoch:
            bytes[39] ^= 0x01
            description = "one bit of the header's epoch flipped (the header checksum catches it)"
            range = 0..<headerLength
        case .keySlot:
            bytes[76 + 60] ^= 0x10
            description = "one bit of the key slot's wrapped key flipped (the header checksum catches it)"
            range = 0..<headerLength
        case .frameLength:
            bytes[first.lowerBound + 3] ^= 0x01
            description = "one bit of the first record's body length flipped; records follow, so it is corruption, not a torn tail"
            range = first
        case .sealedAttributes:
            bytes[attributesBox.lowerBound + 12 + 5] ^= 0x80
            description = "one bit of the first record's sealed attributes flipped"
            range = first
        case .sealedSecret:
            bytes[secretBox.lowerBound + 12 + 2] ^= 0x04
            description = "one bit of the first record's sealed secret flipped"
            range = first
        case .tag:
            bytes[attributesBox.upperBound - 1] ^= 0x01
            description = "one bit of the tag of the first record's attributes box flipped"
            range = first
        case .recordRemoved:
            bytes = Array(bytes[0..<first.lowerBound]) + bytes[records[1]] + bytes[records[2]]
            description = "the first of three records removed"
            range = first.lowerBound..<bytes.count
        case .recordsSwapped:
            bytes = Array(bytes[0..<first.lowerBound]) + bytes[records[1]] + bytes[records[0]] + bytes[records[2]]
            description = "the first two records swapped"
            range = first.lowerBound..<bytes.count
        case .recordDuplicated:
            bytes = Array(bytes[0..<records[1].upperBound]) + bytes[records[1]] + bytes[records[2]]
            description = "the second record repeated"
            range = records[1].upperBound..<bytes.count
        case .recordSpliced:
            let other = try threeRecords(name + ".other", seed: 15)
            let otherBytes = Array(try Data(contentsOf: URL(fileURLWithPath: other.path)))
            try FileManager.default.removeItem(atPath: other.path)
            let otherRecords = recordOffsets(of: otherBytes)
            bytes = Array(bytes[0..<records[1].lowerBound]) + otherBytes[otherRecords[1]] + bytes[records[2]]
            description = "the second record replaced by the second record of another keychain with the same password"
            range = records[1].lowerBound..<bytes.count
        case .version:
            bytes[9] = 2
            description = "format version 2"
            error = "unsupportedVersion"
            version = 2
        case .truncatedHeader:
            bytes = Array(bytes[0..<100])
            description = "the file ends 100 bytes into its header"
            range = 0..<headerLength
        }
        try Data(bytes).write(to: URL(fileURLWithPath: fixture.path))
        return fails(description, credential: fixture.credentialJSON, error: error, range: range, version: version)
    }
}
