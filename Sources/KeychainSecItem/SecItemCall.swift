import KeychainFile

/// What every SecItem function does around its operation: clear the result, find the selected keychain, turn
/// a failure into its status, and keep why it failed for ``SecItemKeychain/lastFailure``.
enum SecItemCall {
    /// Runs `operation` on the selected keychain, as the SecItem function `function`.
    ///
    /// - Returns: errSecSuccess; the failure's status; errSecNoSuchKeychain when no keychain is selected.
    static func status(
        _ function: String, clearing result: UnsafeMutablePointer<CFTypeRef?>? = nil,
        _ operation: (SecItemKeychain) throws(SecItemFailure) -> Void
    ) -> OSStatus {
        result?.pointee = nil
        do throws(SecItemFailure) {
            guard let selection = SecItemKeychain.current else {
                throw SecItemFailure(
                    errSecNoSuchKeychain,
                    "no keychain is selected: call SecItemKeychain.use(_:accessGroups:) first, or run this inside SecItemKeychain.run(_:)")
            }
            try operation(selection)
            SecItemLastFailure.record(nil)
            return errSecSuccess
        } catch {
            return failed(function, error)
        }
    }

    /// Records `failure` as this thread's last and returns its status: for a function that fails before its
    /// operation starts.
    static func failed(_ function: String, _ failure: SecItemFailure) -> OSStatus {
        SecItemLastFailure.record(SecItemFailureReason(function: function, status: failure.status, reason: failure.reason))
        return failure.status
    }

    /// Rejects Apple's item objects, which this module does not have.
    ///
    /// - Throws: errSecUnimplemented when `kSecValueRef` is given or `kSecReturnRef` is `true`.
    static func rejectReferences(_ request: SecItemDictionary) throws(SecItemFailure) {
        if request.hasValueReference {
            throw SecItemFailure(errSecUnimplemented, "kSecValueRef: item objects are not supported; use kSecValueData")
        }
        if request.returnsReference {
            throw SecItemFailure(errSecUnimplemented, "kSecReturnRef: item objects are not supported; use kSecReturnData or kSecReturnAttributes")
        }
    }
}
