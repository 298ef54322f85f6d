// The result codes the SecItem functions return, with Apple's values. Source: Apple's Security framework,
// `Security/base/SecBase.h` (repository apple-open-source/macos, commit 04b1b654a84a3c15e1420ab7913cbf701fa74cbc,
// the `CF_ENUM(OSStatus)` list). The KeychainFile errors carry the same codes (`KeychainError.code`).

import Foundation

/// No error (0).
public let errSecSuccess: OSStatus = 0
#if !canImport(Darwin)
/// No error (0): the name `MacTypes.h` gives `errSecSuccess`, which ported code often compares against. On
/// Apple platforms the system defines it.
public let noErr: OSStatus = 0
#endif
/// The operation is not implemented (−4): returned for `kSecValueRef`, `kSecReturnRef` and identity adds,
/// which need Apple's `SecCertificate`/`SecKey`/`SecIdentity` objects.
public let errSecUnimplemented: OSStatus = -4
/// An I/O error on the keychain file (−36).
public let errSecIO: OSStatus = -36
/// A parameter is not valid (−50): an unknown key, a value of the wrong type, an unsupported combination.
public let errSecParam: OSStatus = -50
/// A limit of the keychain file was reached (−108).
public let errSecAllocate: OSStatus = -108
/// The password or key no longer opens the keychain (−25293), for example after another process rotated it.
public let errSecAuthFailed: OSStatus = -25293
/// No keychain has been selected (−25294): call `SecItemKeychain.use(_:accessGroups:)` first.
public let errSecNoSuchKeychain: OSStatus = -25294
/// An item with the same primary key already exists (−25299).
public let errSecDuplicateItem: OSStatus = -25299
/// No item matches (−25300).
public let errSecItemNotFound: OSStatus = -25300
/// An attribute key is not one of the class's attributes (−25303), such as `kSecAttrServer` for a generic
/// password.
public let errSecNoSuchAttr: OSStatus = -25303
/// The `kSecClass` value is not a known class (−25306).
public let errSecNoSuchClass: OSStatus = -25306
/// User interaction is not allowed (−25308). Never returned by this module (it has no user interface);
/// defined for ported code that compares against it.
public let errSecInteractionNotAllowed: OSStatus = -25308
/// The keychain file is damaged or is not a keychain file (−26275).
public let errSecDecode: OSStatus = -26275
/// The access group is not one of the program's access groups (−34018).
public let errSecMissingEntitlement: OSStatus = -34018
/// The keychain file was rolled back to an older state (−67808).
public let errSecVerifyFailed: OSStatus = -67808
