// Values of kSecAttrAccessible, kSecAttrSynchronizable, kSecAttrKeyClass and kSecAttrKeyType, with Apple's
// string values. Source: Apple's Security framework, `Security/OSX/sec/Security/SecItemConstants.c`
// (repository apple-open-source/macos, commit 04b1b654a84a3c15e1420ab7913cbf701fa74cbc).

// MARK: kSecAttrAccessible

/// Readable while the device is unlocked (`"ak"`); the default.
public let kSecAttrAccessibleWhenUnlocked = "ak"
/// Readable after the first unlock following a restart (`"ck"`).
public let kSecAttrAccessibleAfterFirstUnlock = "ck"
/// Always readable (`"dk"`; deprecated by Apple).
public let kSecAttrAccessibleAlways = "dk"
/// Readable while unlocked, only if a passcode is set; never migrates (`"akpu"`).
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly = "akpu"
/// Readable while unlocked; never migrates (`"aku"`).
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly = "aku"
/// Readable after the first unlock; never migrates (`"cku"`).
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly = "cku"
/// Always readable; never migrates (`"dku"`; deprecated by Apple).
public let kSecAttrAccessibleAlwaysThisDeviceOnly = "dku"

// MARK: kSecAttrSynchronizable

/// In a query, matches synchronised and local items alike (`"syna"`).
public let kSecAttrSynchronizableAny = "syna"

// MARK: kSecAttrKeyClass

/// A public key (`"0"`).
public let kSecAttrKeyClassPublic = "0"
/// A private key (`"1"`).
public let kSecAttrKeyClassPrivate = "1"
/// A symmetric key (`"2"`).
public let kSecAttrKeyClassSymmetric = "2"

// MARK: kSecAttrKeyType

/// RSA (`"42"`).
public let kSecAttrKeyTypeRSA = "42"
/// Elliptic curve (`"73"`).
public let kSecAttrKeyTypeEC = "73"
/// Elliptic curve over a prime field (`"73"`).
public let kSecAttrKeyTypeECSECPrimeRandom = "73"
