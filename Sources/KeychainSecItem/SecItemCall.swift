import KeychainFile

/// What every SecItem function does around its operation: clear the result, find the selected keychain, and
/// turn a failure into its status.
enum SecItemCall {
    /// Runs `operation` on the selected keychain.
    ///
    /// - Returns: errSecSuccess; the failure's status; errSecNoSuchKeychain when no keychain is selected.
    static func status(
        clearing result: UnsafeMutablePointer<CFTypeRef?>? = nil,
        _ operation: (SecItemKeychain) throws(SecItemFailure) -> Void
    ) -> OSStatus {
        result?.pointee = nil
        guard let selection = SecItemKeychain.current else { return errSecNoSuchKeychain }
        do {
            try operation(selection)
            return errSecSuccess
        } catch {
            return error.status
        }
    }

    /// Rejects Apple's item objects, which this module does not have.
    ///
    /// - Throws: errSecUnimplemented when `kSecValueRef` is given or `kSecReturnRef` is `true`.
    static func rejectReferences(_ request: SecItemDictionary) throws(SecItemFailure) {
        if request.hasValueReference {
            throw SecItemFailure(errSecUnimplemented, "\(kSecValueRef): item objects are not supported; use \(kSecValueData)")
        }
        if request.returnsReference {
            throw SecItemFailure(errSecUnimplemented, "\(kSecReturnRef): item objects are not supported; use \(kSecReturnData) or \(kSecReturnAttributes)")
        }
    }
}
