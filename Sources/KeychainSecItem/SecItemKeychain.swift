import Foundation
import KeychainFile

/// The keychain the SecItem functions work on, and the access groups of the program using it.
///
/// A program selects its keychain once, at startup, with ``use(_:accessGroups:)``; from then on
/// `SecItemAdd`, `SecItemCopyMatching`, `SecItemUpdate` and `SecItemDelete` act on it from any thread. Until
/// a keychain is selected they return `errSecNoSuchKeychain`. Code that should use another keychain for a
/// while (a test, a tool serving several users) binds one to the current task with ``run(_:)``, which takes
/// precedence over the program-wide selection inside its body and in the child tasks it creates.
///
/// Access groups model Apple's keychain-access-groups entitlement. With `accessGroups` `nil` (the default)
/// the program sees every item, and items added without `kSecAttrAccessGroup` get the empty access group.
/// With a list, the first group is where items added without `kSecAttrAccessGroup` go, searches, updates and
/// deletes without `kSecAttrAccessGroup` see only items of the listed groups, and naming a group that is not
/// listed returns `errSecMissingEntitlement`, as on Apple's platforms.
///
/// For example:
/// ```swift
/// let keychain = try Keychain.open(at: "/var/lib/app/secrets.kcf", credential: .password(password))
/// SecItemKeychain.use(keychain, accessGroups: ["TEAMID.com.example.app", "TEAMID.com.example.shared"])
/// let status = SecItemAdd([kSecClass as String: kSecClassGenericPassword,
///                          kSecAttrService as String: "mail", kSecAttrAccount as String: "ann",
///                          kSecValueData as String: Data("s3cret".utf8)], nil)
/// ```
public struct SecItemKeychain: Sendable {
    /// The keychain file.
    public let keychain: Keychain
    /// The program's access groups, the first being the default for new items; `nil` for no restriction.
    public let accessGroups: [String]?

    /// Describes a keychain and the access groups of the program using it, for ``run(_:)``.
    ///
    /// For example:
    /// ```swift
    /// let mailApp = SecItemKeychain(keychain, accessGroups: ["TEAMID.mail", "TEAMID.shared"])
    /// ```
    ///
    /// - Parameters:
    ///   - keychain: The keychain file.
    ///   - accessGroups: The program's access groups, the first being the default for new items; `nil` to
    ///     see every item and add to the empty access group. An empty list makes every call return
    ///     `errSecMissingEntitlement`.
    public init(_ keychain: Keychain, accessGroups: [String]? = nil) {
        self.keychain = keychain
        self.accessGroups = accessGroups
    }

    /// Selects the keychain the SecItem functions use from now on, in every thread and task, replacing any
    /// earlier selection.
    ///
    /// For example:
    /// ```swift
    /// SecItemKeychain.use(try Keychain.open(at: path, credential: .password(password)))
    /// ```
    ///
    /// - Parameters:
    ///   - keychain: The keychain file.
    ///   - accessGroups: The program's access groups (see ``init(_:accessGroups:)``); `nil` for no restriction.
    public static func use(_ keychain: Keychain, accessGroups: [String]? = nil) {
        SecItemSelection.global.set(SecItemKeychain(keychain, accessGroups: accessGroups))
    }

    /// Clears the program-wide selection: afterwards the SecItem functions return `errSecNoSuchKeychain`
    /// (except inside ``run(_:)``).
    ///
    /// For example:
    /// ```swift
    /// SecItemKeychain.stopUsing()
    /// assert(SecItemDelete([kSecClass as String: kSecClassGenericPassword]) == errSecNoSuchKeychain)
    /// ```
    public static func stopUsing() {
        SecItemSelection.global.set(nil)
    }

    /// The selection the SecItem functions use here: the one ``run(_:)`` bound to the current task, else the
    /// program-wide one, else `nil`.
    ///
    /// For example:
    /// ```swift
    /// if SecItemKeychain.current == nil { SecItemKeychain.use(keychain) }
    /// ```
    public static var current: SecItemKeychain? {
        SecItemSelection.scoped ?? SecItemSelection.global.get()
    }

    /// Runs `body` with the SecItem functions using this keychain and these access groups, in the current
    /// task and the child tasks it creates; other threads and tasks keep their selection.
    ///
    /// For example:
    /// ```swift
    /// let status = SecItemKeychain(keychain, accessGroups: ["TEAMID.mail"]).run {
    ///     SecItemDelete([kSecClass as String: kSecClassGenericPassword])
    /// }
    /// ```
    ///
    /// - Parameter body: The code to run.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func run<Result>(_ body: () throws -> Result) rethrows -> Result {
        try SecItemSelection.$scoped.withValue(self, operation: body)
    }

    /// Runs asynchronous `body` with the SecItem functions using this keychain and these access groups, in
    /// the current task and the child tasks it creates.
    ///
    /// For example:
    /// ```swift
    /// let status = await SecItemKeychain(keychain).run { await store.save() }
    /// ```
    ///
    /// - Parameters:
    ///   - isolation: The actor `body` runs on; the caller's by default.
    ///   - body: The code to run.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func run<Result>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async rethrows -> Result {
        try await SecItemSelection.$scoped.withValue(self, operation: body)
    }
}
