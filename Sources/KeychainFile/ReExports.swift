// The KeychainCrypto types that KeychainFile's own public API takes — `Credential.key(SymmetricKey)` — so that
// `import KeychainFile` alone is enough to open a keychain with a key:
//
//     try keychain.addCredential(.key(SymmetricKey(size: .bits256)))
//
// Each declaration is re-exported by name rather than the whole module: a program that imports KeychainFile
// does not also get SHA256, AES or HMAC, whose names would collide with CryptoKit's on Apple platforms. Both
// names stay the same declarations as KeychainCrypto's, so a file that imports both modules sees one type.
@_exported import struct KeychainCrypto.SymmetricKey
@_exported import struct KeychainCrypto.SymmetricKeySize
