import Foundation
import KeychainFile

/// Builds the objects Apple's keychain returns for matches, by Apple's rules: with only `kSecReturnData` the
/// secret as `Data`; with only `kSecReturnPersistentRef` the persistent reference as `Data`; otherwise a
/// dictionary holding `kSecClass`, the attributes (with `kSecReturnAttributes`), `kSecValueData` and
/// `kSecValuePersistentRef`. Several matches come as an array of those.
enum SecItemResultShape {
    /// The object for one match, given what was asked for.
    static func object(for result: SearchResult, returning: ReturnOptions) -> AnyObject {
        if returning == .data {
            return NSData(data: Data(result.value ?? []))
        }
        if returning == .persistentReference {
            return NSData(data: Data(result.persistentReference?.bytes ?? []))
        }
        var dictionary: [String: Any] = [:]
        if returning.contains(.attributes), let attributes = result.attributes {
            dictionary = SecItemValueWriter.dictionary(of: attributes)
            if let key = result.privateKey?.attributes {
                // An identity's attributes: its certificate's, plus those only keys have (as Apple's keychain).
                for (attribute, value) in key where !attribute.isAllowed(in: .certificate) {
                    dictionary[SecItemAttributeKeys.key(for: attribute)] = SecItemValueWriter.object(for: value, of: attribute)
                }
            }
        }
        dictionary[kSecClass] = SecItemClasses.name(of: result.itemClass)
        if returning.contains(.data) {
            dictionary[kSecValueData] = Data(result.value ?? [])
        }
        if returning.contains(.persistentReference), let reference = result.persistentReference {
            dictionary[kSecValuePersistentRef] = Data(reference.bytes)
        }
        return NSDictionary(dictionary: dictionary)
    }

    /// The object for several matches: an array of one object per match.
    static func array(for results: [SearchResult], returning: ReturnOptions) -> AnyObject {
        NSArray(array: results.map { object(for: $0, returning: returning) })
    }
}
