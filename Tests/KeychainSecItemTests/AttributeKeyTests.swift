import Foundation
import Testing
import KeychainFile
@testable import KeychainSecItem

/// The attribute keys and KeychainFile's attribute catalogue correspond one to one.
@Suite("Attribute keys")
struct AttributeKeyTests {
    @Test("Every KeychainFile attribute has an Apple key that leads back to it in each class that allows it")
    func everyAttributeRoundTrips() throws {
        let classes: [(QueryClass, ItemClass)] = [(.genericPassword, .genericPassword), (.internetPassword, .internetPassword),
                                                  (.certificate, .certificate), (.key, .key)]
        for attribute in Attribute.all {
            let key = SecItemAttributeKeys.key(for: attribute)
            #expect(SecItemAttributeKeys.table.contains { $0.attribute == attribute }, "\(attribute.name) has no Apple key")
            for (queryClass, itemClass) in classes where attribute.isAllowed(in: itemClass) {
                #expect(try SecItemAttributeKeys.attribute(forKey: key, in: queryClass) == attribute)
            }
        }
        #expect(Set(SecItemAttributeKeys.table.map(\.attribute)).count == Attribute.all.count)
    }

    @Test("kSecAttrType is a password's type and a key's algorithm; identities take key attributes from keys")
    func sharedTypeKey() throws {
        #expect(try SecItemAttributeKeys.attribute(forKey: kSecAttrType, in: .genericPassword) == .itemType)
        #expect(try SecItemAttributeKeys.attribute(forKey: kSecAttrKeyType, in: .key) == .keyType)
        #expect(try SecItemAttributeKeys.attribute(forKey: kSecAttrType, in: .identity) == .keyType)
        #expect(try SecItemAttributeKeys.attribute(forKey: kSecAttrLabel, in: .identity) == .label)
        #expect(throws: SecItemFailure.self) { try SecItemAttributeKeys.attribute(forKey: kSecAttrType, in: .certificate) }
    }

    @Test("Each kSecAttrAccessible value maps to its own accessibility, and back")
    func accessibility() {
        let strings = [kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleAfterFirstUnlock, kSecAttrAccessibleAlways,
                       kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
                       kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, kSecAttrAccessibleAlwaysThisDeviceOnly]
        let expected: [Accessibility] = [.whenUnlocked, .afterFirstUnlock, .always, .whenPasscodeSetThisDeviceOnly,
                                         .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly, .alwaysThisDeviceOnly]
        #expect(strings.map { SecItemAccessibility.code(for: $0) } == expected.map(\.rawValue))
        #expect(expected.map { SecItemAccessibility.string(for: $0.rawValue) } == strings)
    }
}
