import KeychainFile

/// The state of one `chaos` run: the open keychain, which password opens it, and the live chaos items.
struct ChaosRun {
    private let keychain: Keychain
    private let passwords: [String]
    private var password: Int
    private var random: WorkerRandom
    private var live: [String]
    private var nextAccount = 0
    private let tag: String
    /// Secret sizes are mostly small; now and then large, so that a kill can land inside a long write.
    private static let largeSecrets = 16...65_536
    private static let smallSecrets = 1...400
    private static let iterations = PasswordIterations.insecureForTesting(1_000)

    init(path: String, passwords: [String], seed: UInt64) throws(KeychainError) {
        self.passwords = passwords
        random = WorkerRandom(seed: seed)
        tag = String(seed, radix: 16)
        let automatic = random.below(4) == 0
        let options = Keychain.OpenOptions(
            autoCompaction: automatic ? AutoCompaction(deadShare: 0.3, minimumFileSize: 16 << 10) : .disabled)
        var opened: (Keychain, Int)? = nil
        for (index, candidate) in passwords.enumerated() {
            do throws(KeychainError) {
                opened = (try Keychain.open(at: path, credential: .password(candidate), options: options), index + 1)
                break
            } catch {
                guard case .wrongCredentials = error else { throw error }
            }
        }
        guard let (keychain, password) = opened else { throw .wrongCredentials }
        self.keychain = keychain
        self.password = password
        live = try ChaosItems.accounts(in: keychain)
        let statistics = try keychain.statistics()
        acknowledge("open \(password) \(automatic ? "auto" : "manual") \(statistics.epoch) \(Self.end(statistics, keychain))")
    }

    /// Chooses, announces, runs and acknowledges step `sequence`.
    mutating func step(_ sequence: Int) throws(KeychainError) {
        let step = choose(sequence)
        acknowledge("begin \(sequence) \(step.words)")
        try perform(step)
        let statistics = try keychain.statistics()
        acknowledge("ack \(sequence) \(statistics.epoch) \(Self.end(statistics, keychain))")
    }

    /// The end of the file's last whole record: its size without a torn tail.
    private static func end(_ statistics: KeychainStatistics, _ keychain: Keychain) -> Int {
        statistics.fileSize - (keychain.tornTail?.byteCount ?? 0)
    }

    private mutating func choose(_ sequence: Int) -> ChaosStep {
        let roll = random.below(100)
        if live.count < 4 || roll < 28 { return .items([newItem(sequence, 0)], batch: false) }
        switch roll {
        case 28..<46:
            return .items([.update(account: pickLive(), content: content(sequence, 0))], batch: false)
        case 46..<58:
            return .items([.delete(account: pickLive())], batch: false)
        case 58..<80:
            return .items(batchOperations(sequence), batch: true)
        case 80..<91:
            return .compact
        default:
            return .credential(password: password == 1 ? 2 : 1, rotate: random.below(2) == 0)
        }
    }

    /// Two to five operations on distinct accounts: new items, updates and deletes of live ones.
    private mutating func batchOperations(_ sequence: Int) -> [ChaosItemOperation] {
        var untouched = live
        var operations: [ChaosItemOperation] = []
        for index in 0..<(2 + random.below(4)) {
            let kind = random.below(3)
            if kind == 0 || untouched.isEmpty {
                operations.append(newItem(sequence, index))
                continue
            }
            let account = untouched.remove(at: random.below(untouched.count))
            operations.append(kind == 1 ? .update(account: account, content: content(sequence, index)) : .delete(account: account))
        }
        return operations
    }

    private mutating func newItem(_ sequence: Int, _ index: Int) -> ChaosItemOperation {
        nextAccount += 1
        return .add(account: "a\(tag)-\(nextAccount)", content: content(sequence, index))
    }

    private mutating func pickLive() -> String {
        live[random.below(live.count)]
    }

    private mutating func content(_ sequence: Int, _ index: Int) -> ChaosContent {
        let sizes = random.below(8) == 0 ? Self.largeSecrets : Self.smallSecrets
        let length = sizes.lowerBound + random.below(sizes.count)
        return ChaosContent(
            secretText: "s\(tag)-\(sequence)-\(index)", secretLength: length,
            label: "l\(tag)-\(sequence)-\(index)", comment: "c\(tag)-\(sequence)-\(index)")
    }

    private mutating func perform(_ step: ChaosStep) throws(KeychainError) {
        switch step {
        case .items(let operations, let batch):
            if batch {
                try keychain.batch { (batch) throws(KeychainError) in
                    for operation in operations { try Self.apply(operation, to: &batch) }
                }
            } else {
                try Self.apply(operations[0], to: keychain)
            }
            for operation in operations {
                switch operation {
                case .add(let account, _): live.append(account)
                case .delete(let account): live.removeAll { $0 == account }
                case .update: break
                }
            }
        case .compact:
            try keychain.compact()
        case .credential(let new, let rotate):
            let newCredential = Credential.password(passwords[new - 1])
            if rotate {
                try keychain.rotateMasterKey(credentials: [newCredential], iterations: Self.iterations)
            } else {
                // "change" is the slot-only change (ChaosStep): the master key stays; "rotate" covers a new one.
                try keychain.changeCredentialKeepingKeys(
                    from: .password(passwords[password - 1]), to: newCredential, keyDerivation: .pbkdf2(Self.iterations))
            }
            password = new
        }
    }

    private static func item(_ account: String, _ content: ChaosContent) -> GenericPassword {
        GenericPassword(service: ChaosItems.service, account: account, label: content.label, comment: content.comment,
                        value: content.secret)
    }

    private static func changes(_ content: ChaosContent) -> [Attribute: AttributeValue] {
        [.label: .string(content.label), .comment: .string(content.comment)]
    }

    /// Runs one operation through the single-operation calls.
    private static func apply(_ operation: ChaosItemOperation, to keychain: Keychain) throws(KeychainError) {
        switch operation {
        case .add(let account, let content):
            try keychain.add(item(account, content))
        case .update(let account, let content):
            guard try keychain.update(ChaosItems.query(account), setting: changes(content), secret: content.secret) == 1 else {
                throw .invalidParameter("updating \(account) changed other than one item")
            }
        case .delete(let account):
            guard try keychain.delete(ChaosItems.query(account)) == 1 else {
                throw .invalidParameter("deleting \(account) removed other than one item")
            }
        }
    }

    /// Stages one operation in a batch.
    private static func apply(_ operation: ChaosItemOperation, to batch: inout Batch) throws(KeychainError) {
        switch operation {
        case .add(let account, let content):
            try batch.add(item(account, content))
        case .update(let account, let content):
            guard try batch.update(ChaosItems.query(account), setting: changes(content), secret: content.secret) == 1 else {
                throw .invalidParameter("updating \(account) changed other than one item")
            }
        case .delete(let account):
            guard try batch.delete(ChaosItems.query(account)) == 1 else {
                throw .invalidParameter("deleting \(account) removed other than one item")
            }
        }
    }
}
