extension SecItemKeychain {
    /// Why the last SecItem function called on this thread failed, or `nil` if it succeeded: the function, its
    /// status and the reason in words (``SecItemFailureReason``).
    ///
    /// Apple's functions return only a status; this is the detail behind it, kept per thread like `errno`.
    /// Read it right after the call, on the same thread — in `async` code, before the next `await`. Every
    /// SecItem call replaces it, a successful one with `nil`.
    ///
    /// For example:
    /// ```swift
    /// let status = SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, "colour": "blue"], nil)
    /// // status == errSecParam; SecItemKeychain.lastFailure?.reason == "\"colour\": not a key the SecItem functions know"
    /// ```
    public static var lastFailure: SecItemFailureReason? { SecItemLastFailure.current }
}
