// swift-tools-version:6.0
//
// KeychainFile: a portable, encrypted keychain file for Swift.
//
// No package dependencies, no C targets, no unsafe flags: everything below builds from the Swift
// standard library and the platform's libc alone.
import PackageDescription

let package = Package(
    name: "KeychainFile",
    products: [
        .library(name: "KeychainCrypto", targets: ["KeychainCrypto"]),
        .executable(name: "kcf-bench", targets: ["kcf-bench"]),
    ],
    targets: [
        .target(name: "KeychainCrypto"),
        .executableTarget(name: "kcf-bench", dependencies: ["KeychainCrypto"]),
        .testTarget(name: "KeychainCryptoTests", dependencies: ["KeychainCrypto"]),
    ],
    swiftLanguageModes: [.v6]
)
