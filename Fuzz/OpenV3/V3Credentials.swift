@testable import KeychainCrypto
@testable import KeychainFile

/// The credentials of every file the open-v3 target writes, and the access groups they reach: the file is created
/// with ``FuzzCredentials``' raw key (full), and a script may add its password (full, one PBKDF2 iteration), a raw
/// key scoped to group A and a password scoped to the default group and group B. Group C is reached by the full
/// credentials alone.
enum V3Credentials {
    static let groups = ["", "fuzz.a", "fuzz.b", "fuzz.c"]

    /// 32 bytes of 0x53, scoped to group A.
    static let scopedKey = Credential.key(SymmetricKey(data: [UInt8](repeating: 0x53, count: 32)))
    static let scopedKeyGroups: Set<String> = ["fuzz.a"]
    /// Scoped to the default group and group B.
    static let scopedPassword = Credential.password("fuzz scoped")
    static let scopedPasswordGroups: Set<String> = ["", "fuzz.b"]

    /// One known credential: how it is named in traces, and the groups it was given (`nil`: the whole keychain).
    struct Known {
        let name: String
        let credential: Credential
        let groups: Set<String>?

        var isPassword: Bool {
            if case .password = credential { return true }
            return false
        }
    }

    static let all = [
        Known(name: "full key", credential: FuzzCredentials.key, groups: nil),
        Known(name: "full password", credential: FuzzCredentials.password, groups: nil),
        Known(name: "scoped key", credential: scopedKey, groups: scopedKeyGroups),
        Known(name: "scoped password", credential: scopedPassword, groups: scopedPasswordGroups),
    ]

    /// One PBKDF2 iteration: a password slot the fuzzer's executions can afford to open.
    static let cheap = PasswordKeyDerivation.pbkdf2(.insecureForTesting(1))
}
