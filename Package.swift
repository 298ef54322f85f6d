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
        .library(name: "KeychainSecItem", targets: ["KeychainSecItem"]),
        .executable(name: "kcf-bench", targets: ["kcf-bench"]),
        .executable(name: "kcf", targets: ["kcf"]),
    ],
    targets: [
        .target(name: "KeychainCrypto"),
        .target(name: "KeychainFile", dependencies: ["KeychainCrypto"]),
        // Apple's SecItem functions and constants over KeychainFile, in a module of its own so that on Apple
        // platforms the names collide with Security.framework's only where a program imports both.
        .target(name: "KeychainSecItem", dependencies: ["KeychainFile"]),
        .executableTarget(name: "kcf-bench", dependencies: ["KeychainCrypto", "KeychainFile"]),
        // Writes Fixtures/v1 from seeded randomness; the tests use it to check the fixtures are reproducible.
        .target(name: "KeychainFileFixtures", dependencies: ["KeychainFile", "KeychainCrypto", "KeychainTestSupport"]),
        // What the test targets and the fixture generator share: hex bytes, record frames, built products.
        .target(name: "KeychainTestSupport"),
        .executableTarget(name: "kcf-fixtures", dependencies: ["KeychainFileFixtures"]),
        // A child process for the multi-process tests (and crash trials); the tests depend on it so that
        // `swift test` builds it beside them.
        .executableTarget(name: "kcf-worker", dependencies: ["KeychainFile"]),
        // The command-line tool, in the dialect of macOS security(1).
        .executableTarget(name: "kcf", dependencies: ["KeychainFile", "KeychainCrypto"]),
        .testTarget(name: "KeychainCryptoTests", dependencies: ["KeychainCrypto", "KeychainTestSupport"]),
        // Runs the built kcf binary end to end; depends on it so that `swift test` builds it beside the tests.
        // KeychainFile too: some tests make large or damaged keychains faster than the CLI would.
        .testTarget(name: "KcfCommandLineTests", dependencies: ["kcf", "KeychainFile", "KeychainTestSupport"]),
        .testTarget(name: "KeychainSecItemTests", dependencies: ["KeychainSecItem", "KeychainFile", "KeychainTestSupport"]),
        .testTarget(
            name: "KeychainFileTests", dependencies: ["KeychainFile", "KeychainCrypto", "KeychainFileFixtures", "KeychainTestSupport", "kcf-worker"],
            exclude: ["Reliability/README.md"]),
    ],
    swiftLanguageModes: [.v6]
)
