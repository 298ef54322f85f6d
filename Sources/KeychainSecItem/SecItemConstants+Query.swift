// The class, search, return and value keys of Apple's SecItem dictionaries, with Apple's string values.
// Source: Apple's Security framework, `Security/OSX/sec/Security/SecItemConstants.c` (repository
// apple-open-source/macos, commit 04b1b654a84a3c15e1420ab7913cbf701fa74cbc), which declares each constant as
// `SEC_CONST_DECL (name, "value")`. kSecUseDataProtectionKeychain: see its declaration below.

// MARK: Class

/// The key of an item's class (`"class"`); its value is one of the `kSecClass…` values.
public let kSecClass = "class"
/// Generic passwords (`"genp"`).
public let kSecClassGenericPassword = "genp"
/// Internet passwords (`"inet"`).
public let kSecClassInternetPassword = "inet"
/// Certificates (`"cert"`); `kSecValueData` is the certificate's DER.
public let kSecClassCertificate = "cert"
/// Keys (`"keys"`); `kSecValueData` is the key's bytes.
public let kSecClassKey = "keys"
/// Identities (`"idnt"`): a certificate paired with its private key. Searched, not added.
public let kSecClassIdentity = "idnt"

// MARK: Search

/// The key of how many matches to return (`"m_Limit"`): `kSecMatchLimitOne` (the default of
/// `SecItemCopyMatching`), `kSecMatchLimitAll` or a positive integer.
public let kSecMatchLimit = "m_Limit"
/// One match (`"m_LimitOne"`): the result is one object.
public let kSecMatchLimitOne = "m_LimitOne"
/// Every match (`"m_LimitAll"`): the result is an array.
public let kSecMatchLimitAll = "m_LimitAll"

// MARK: Return

/// Return each match's secret as `Data` (`"r_Data"`); the value is a Boolean.
public let kSecReturnData = "r_Data"
/// Return each match's attributes as a dictionary (`"r_Attributes"`); the value is a Boolean.
public let kSecReturnAttributes = "r_Attributes"
/// Return a `SecKeychainItem`/`SecKey`/`SecCertificate` object (`"r_Ref"`): not supported (errSecUnimplemented
/// when `true`).
public let kSecReturnRef = "r_Ref"
/// Return each match's persistent reference as `Data` (`"r_PersistentRef"`); the value is a Boolean.
public let kSecReturnPersistentRef = "r_PersistentRef"

// MARK: Value

/// An item's secret (`"v_Data"`): `Data` in `SecItemAdd` and in `SecItemUpdate`'s changes; ignored in
/// searches and deletes, as Apple's keychain ignores it.
public let kSecValueData = "v_Data"
/// An item as an object (`"v_Ref"`): not supported (errSecUnimplemented).
public let kSecValueRef = "v_Ref"
/// An item's persistent reference (`"v_PersistentRef"`): `Data` returned by `kSecReturnPersistentRef`; in a
/// query it restricts the search to that item, and `kSecClass` may then be left out.
public let kSecValuePersistentRef = "v_PersistentRef"

// MARK: Use

/// Whether to use the data-protection (iOS-style) keychain on macOS (`"nleg"`). This module always behaves
/// that way, so the key is accepted and ignored, as Apple's keychain ignores it outside macOS.
///
/// Source: a later revision of Apple's `SecItemConstants.c` declares it `"nleg"` ("API version replacing
/// kSecAttrNoLegacy"); the revision cited above declares `kSecAttrNoLegacy` as `"nleg"`.
public let kSecUseDataProtectionKeychain = "nleg"
