#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import KeychainCrypto
import KeychainFile

/// The item every store benchmark writes; `Scripts/compare-peers.py` builds the same rows for SQLite.
enum BenchmarkItem {
    static let secretSize = 32

    static func make(_ index: Int) -> GenericPassword {
        var secret = [UInt8](repeating: 0, count: secretSize)
        var generator = SplitMix64(seed: UInt64(index) &+ 0x9E37_79B9)
        for position in secret.indices { secret[position] = UInt8.random(in: 0...255, using: &generator) }
        return GenericPassword(
            service: "service-\(index % 64).example.com", account: "user\(index)@example.com",
            label: "Benchmark item \(index)", itemDescription: "benchmark password", comment: "written by kcf-bench",
            creator: 0x6B63_6662, value: secret)
    }
}
