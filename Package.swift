// swift-tools-version:6.0
//
// KeychainFile: a portable, encrypted keychain file for Swift.
//
// No package dependencies, no C targets, no unsafe flags: everything below builds from the Swift
// standard library, Foundation and the platform's libc alone.
import PackageDescription

let package = Package(
    name: "KeychainFile",
    products: [
        .library(name: "KeychainFile", targets: ["KeychainFile"]),
        .library(name: "KeychainCrypto", targets: ["KeychainCrypto"]),
        .executable(name: "kcf-bench", targets: ["kcf-bench"]),
    ],
    targets: [
        .target(name: "KeychainCrypto"),
        .target(name: "KeychainFile", dependencies: ["KeychainCrypto"]),
        .executableTarget(name: "kcf-bench", dependencies: ["KeychainCrypto"]),
        // Writes Fixtures/v1 from seeded randomness; the tests use it to check the fixtures are reproducible.
        .target(name: "KeychainFileFixtures", dependencies: ["KeychainFile", "KeychainCrypto"]),
        .executableTarget(name: "kcf-fixtures", dependencies: ["KeychainFileFixtures"]),
        // A child process for the multi-process tests (and crash trials); the tests depend on it so that
        // `swift test` builds it beside them.
        .executableTarget(name: "kcf-worker", dependencies: ["KeychainFile"]),
        .testTarget(name: "KeychainCryptoTests", dependencies: ["KeychainCrypto"]),
        .testTarget(name: "KeychainFileTests", dependencies: ["KeychainFile", "KeychainCrypto", "KeychainFileFixtures", "kcf-worker"]),
    ],
    swiftLanguageModes: [.v6]
)
