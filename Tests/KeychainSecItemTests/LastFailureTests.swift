import Foundation
import KeychainFile
@testable import KeychainSecItem
import KeychainTestSupport
import Testing

/// Why a SecItem call failed: `SecItemKeychain.lastFailure` names the function, the status and what was wrong
/// (the key, the value's type, the keychain's error), per thread; and `noErr` exists.
@Suite("Last failure")
struct LastFailureTests {
    static var password: [String: Any] { [
        kSecClass as String: kSecClassGenericPassword,
        kSecAttrService as String: "com.example.failure",
        kSecAttrAccount as String: "ann",
    ] }

    static func with(_ extra: [String: Any]) -> [String: Any] { password.merging(extra) { $1 } }

    @Test("noErr is 0, the status of a call that worked")
    func noErrExists() throws {
        #expect(noErr == 0 && noErr == errSecSuccess)
        let file = try TemporaryKeychain()
        file.run {
            #expect(SecItemAdd(Self.with([kSecValueData as String: Data("s3cret".utf8)]), nil) == noErr)
        }
    }

    @Test("Each cause of errSecParam, errSecNoSuchAttr and errSecNoSuchClass is named in words")
    func parameterReasons() throws {
        let file = try TemporaryKeychain()
        let cases: [(String, [String: Any], OSStatus, String)] = [
            ("unknown key", Self.with(["colour": "blue"]), errSecParam, "\"colour\": not a key the SecItem functions know"),
            ("data is a string", Self.with([kSecValueData as String: "s3cret"]), errSecParam,
             "kSecValueData: expected Data, got a value of type String"),
            ("data is a number", Self.with([kSecValueData as String: 42]), errSecParam,
             "kSecValueData: expected Data, got a value of type Int"),
            ("account is a number", Self.with([kSecAttrAccount as String: 42]), errSecParam, "kSecAttrAccount: a value of type Int"),
            ("return data is a string", Self.with([kSecReturnData as String: "yes"]), errSecParam, "kSecReturnData: expected a Boolean"),
            ("no class", [kSecAttrAccount as String: "ann"], errSecParam, "kSecClass is missing"),
            ("unknown class", Self.with([kSecClass as String: "apls"]), errSecNoSuchClass, "kSecClass: \"apls\" is not a supported class"),
            ("server in a generic password", Self.with([kSecAttrServer as String: "example.com"]), errSecNoSuchAttr,
             "kSecAttrServer: not an attribute of"),
            ("value reference", Self.with([kSecValueRef as String: NSObject()]), errSecUnimplemented,
             "kSecValueRef: item objects are not supported"),
        ]
        file.run {
            for (name, attributes, status, reason) in cases {
                #expect(SecItemAdd(attributes, nil) == status, "\(name)")
                let failure = SecItemKeychain.lastFailure
                #expect(failure?.function == "SecItemAdd" && failure?.status == status, "\(name): \(String(describing: failure))")
                #expect(failure?.reason.contains(reason) == true, "\(name): \(String(describing: failure?.reason))")
            }
        }
    }

    @Test("The description reads as a sentence: function, status, Apple's text for it, and the reason")
    func description() throws {
        let file = try TemporaryKeychain()
        file.run {
            #expect(SecItemCopyMatching(Self.with(["colour": "blue"]), nil) == errSecParam)
        }
        let failure = try #require(file.run { SecItemKeychain.lastFailure })
        #expect(failure.description == "SecItemCopyMatching: -50, One or more parameters passed to a function were not valid. "
            + "(\"colour\": not a key the SecItem functions know)")
    }

    @Test("A failure of the keychain itself carries the keychain's error: a duplicate, a missing item")
    func keychainReasons() throws {
        let file = try TemporaryKeychain()
        file.run {
            #expect(SecItemAdd(Self.password, nil) == errSecSuccess)
            #expect(SecItemAdd(Self.password, nil) == errSecDuplicateItem)
            #expect(SecItemKeychain.lastFailure?.reason.contains("duplicate item") == true)
            #expect(SecItemDelete(Self.with([kSecAttrAccount as String: "nobody"])) == errSecItemNotFound)
            #expect(SecItemKeychain.lastFailure == SecItemFailureReason(
                function: "SecItemDelete", status: errSecItemNotFound, reason: "item not found"))
            #expect(SecItemUpdate(Self.password, [kSecMatchLimit as String: kSecMatchLimitOne]) == errSecParam)
            #expect(SecItemKeychain.lastFailure?.function == "SecItemUpdate")
        }
    }

    @Test("A call that works clears the last failure")
    func successClears() throws {
        let file = try TemporaryKeychain()
        file.run {
            #expect(SecItemAdd(Self.with(["colour": "blue"]), nil) == errSecParam)
            #expect(SecItemKeychain.lastFailure != nil)
            #expect(SecItemAdd(Self.password, nil) == errSecSuccess)
            #expect(SecItemKeychain.lastFailure == nil)
        }
    }

    @Test("A dictionary whose keys are not all strings is named as such")
    func nonStringKeys() throws {
        let file = try TemporaryKeychain()
        let dictionary = NSDictionary(dictionary: [NSNumber(value: 1): "x", kSecClass as NSString: kSecClassGenericPassword])
        file.run {
            #expect(SecItemDelete(dictionary as CFDictionary) == errSecParam)
            #expect(SecItemKeychain.lastFailure?.function == "SecItemDelete")
            #expect(SecItemKeychain.lastFailure?.reason.contains("every key must be a string") == true)
            #expect(SecItemUpdate(Self.password as CFDictionary, dictionary as CFDictionary) == errSecParam)
            #expect(SecItemKeychain.lastFailure?.reason.hasPrefix("attributesToUpdate:") == true)
        }
    }

    @Test("Each thread has its own last failure, as each has its own errno")
    func perThread() throws {
        let file = try TemporaryKeychain()
        let selection = SecItemKeychain(file.keychain)
        let otherThreadSaw = LockedBox<SecItemFailureReason?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            selection.run {
                _ = SecItemAdd(Self.with([kSecValueData as String: "not data"]), nil)
                ready.signal()
                proceed.wait()
                otherThreadSaw.set(SecItemKeychain.lastFailure)
            }
            done.signal()
        }
        thread.start()
        ready.wait()
        selection.run {
            #expect(SecItemAdd(Self.password, nil) == errSecSuccess)
            #expect(SecItemKeychain.lastFailure == nil, "this thread saw the other thread's failure")
        }
        proceed.signal()
        done.wait()
        #expect(otherThreadSaw.get()?.reason.hasPrefix("kSecValueData: expected Data") == true,
                "the other thread's failure was cleared by this thread's success: \(String(describing: otherThreadSaw.get()))")
    }

    @Test("The names in messages are the constants' own: each key's name is the constant with that string")
    func keyNamesMatchTheConstants() throws {
        var constants: [String: String] = [:]
        let folder = RepositoryFiles.url("Sources/KeychainSecItem")
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasPrefix("SecItemConstants") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("public let kSec") {
                let parts = line.dropFirst("public let ".count).split(separator: " = ")
                constants[String(parts[0])] = String(parts[1]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        #expect(constants.count > 100, "the constants were not found: \(constants.count)")
        #expect(SecItemKeyNames.names.count >= 50)
        for (key, names) in SecItemKeyNames.names {
            for name in names.split(separator: "/") {
                #expect(constants[String(name)] == key, "\(name) is named for \"\(key)\" but is \(String(describing: constants[String(name)]))")
            }
        }
        #expect(SecItemKeyNames.describe(kSecAttrType) == "kSecAttrType/kSecAttrKeyType")
        #expect(SecItemKeyNames.describe("colour") == "\"colour\"")
    }
}

/// A value shared between threads behind a lock.
final class LockedBox<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
}
