import Testing
@testable import KeychainFile

/// `PasswordKeyDerivation`'s checks: `.argon2id` takes SPEC.md §21.1's ranges above OWASP's least cost and at most
/// the 1 GiB a default open allows; `.insecureForTesting` the format's ranges and the same cap; each refusal is
/// `invalidParameter` naming the value.
@Suite("PasswordKeyDerivation: Argon2id's ranges, the standard, version 1")
struct PasswordKeyDerivationTests {
    /// The reason of the `invalidParameter` `make` throws, or `nil` when it throws nothing.
    static func refusal(_ make: () throws(KeychainError) -> PasswordKeyDerivation) -> String? {
        do {
            _ = try make()
            return nil
        } catch {
            guard case .invalidParameter(let reason) = error else { return "not invalidParameter: \(error)" }
            return reason
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let memoryKiB: UInt32
        let passes: UInt32
        let lanes: UInt8
        /// Words the refusal must contain; `nil` when the values are accepted.
        let refusedFor: String?
        var testDescription: String { "m=\(memoryKiB) t=\(passes) p=\(lanes)" + (refusedFor.map { " refused (\($0))" } ?? " accepted") }
    }

    static let argon2idCases: [Case] = [
        Case(memoryKiB: 65_536, passes: 3, lanes: 4, refusedFor: nil),
        Case(memoryKiB: 19_456, passes: 2, lanes: 1, refusedFor: nil),  // the least memory and passes
        Case(memoryKiB: 19_455, passes: 2, lanes: 1, refusedFor: "19455 KiB"),
        Case(memoryKiB: 19_456, passes: 1, lanes: 1, refusedFor: "passes must be at least 2"),
        Case(memoryKiB: 1_048_576, passes: 64, lanes: 16, refusedFor: nil),  // 1 GiB, memory × passes = 2²⁶ KiB
        Case(memoryKiB: 1_048_577, passes: 2, lanes: 1, refusedFor: "at most 1048576 KiB"),
        Case(memoryKiB: 4_194_304, passes: 2, lanes: 1, refusedFor: "at most 1048576 KiB"),  // the format's 4 GiB
        Case(memoryKiB: 1_048_576, passes: 65, lanes: 1, refusedFor: "memory × passes"),
        Case(memoryKiB: 65_536, passes: 1 << 20, lanes: 1, refusedFor: "memory × passes"),
        Case(memoryKiB: 65_536, passes: (1 << 20) + 1, lanes: 1, refusedFor: "passes must be between 1 and 1048576"),
        Case(memoryKiB: 65_536, passes: 3, lanes: 0, refusedFor: "lanes must be between 1 and 16, got 0"),
        Case(memoryKiB: 65_536, passes: 3, lanes: 16, refusedFor: nil),
        Case(memoryKiB: 65_536, passes: 3, lanes: 17, refusedFor: "lanes must be between 1 and 16, got 17"),
    ]

    @Test(".argon2id accepts SPEC §21.1's ranges from 19 MiB and 2 passes up to 1 GiB, and refuses each value outside",
          arguments: argon2idCases)
    func argon2idRanges(_ check: Case) {
        let reason = Self.refusal { () throws(KeychainError) in
            try PasswordKeyDerivation.argon2id(memoryKiB: check.memoryKiB, passes: check.passes, lanes: check.lanes)
        }
        if let words = check.refusedFor {
            #expect(reason?.contains(words) == true, "\(reason ?? "accepted")")
        } else {
            #expect(reason == nil)
            let made = try? PasswordKeyDerivation.argon2id(memoryKiB: check.memoryKiB, passes: check.passes, lanes: check.lanes)
            #expect(made?.slotKDF == .argon2id(memoryKiB: check.memoryKiB, passes: check.passes, lanes: check.lanes))
        }
    }

    static let insecureCases: [Case] = [
        Case(memoryKiB: 8, passes: 1, lanes: 1, refusedFor: nil),  // the format's least
        Case(memoryKiB: 7, passes: 1, lanes: 1, refusedFor: "at least 8 KiB for each lane"),
        Case(memoryKiB: 16, passes: 1, lanes: 2, refusedFor: nil),  // memory = 8 × lanes
        Case(memoryKiB: 15, passes: 1, lanes: 2, refusedFor: "(16 KiB for 2), got 15 KiB"),
        Case(memoryKiB: 128, passes: 1, lanes: 16, refusedFor: nil),
        Case(memoryKiB: 127, passes: 1, lanes: 16, refusedFor: "(128 KiB for 16), got 127 KiB"),
        Case(memoryKiB: 64, passes: 0, lanes: 1, refusedFor: "passes must be between 1 and 1048576, got 0"),
        Case(memoryKiB: 64, passes: 1 << 20, lanes: 1, refusedFor: nil),  // the most passes; 2²⁶ KiB of work
        Case(memoryKiB: 65, passes: 1 << 20, lanes: 1, refusedFor: "memory × passes"),
        Case(memoryKiB: 1_048_576, passes: 1, lanes: 1, refusedFor: nil),
        Case(memoryKiB: 1_048_577, passes: 1, lanes: 1, refusedFor: "at most 1048576 KiB"),
        Case(memoryKiB: 64, passes: 1, lanes: 0, refusedFor: "lanes must be between 1 and 16, got 0"),
    ]

    @Test(".insecureForTesting takes the format's ranges below OWASP's cost, still at most 1 GiB", arguments: insecureCases)
    func insecureRanges(_ check: Case) {
        let reason = Self.refusal { () throws(KeychainError) in
            try PasswordKeyDerivation.insecureForTesting(argon2idMemoryKiB: check.memoryKiB, passes: check.passes, lanes: check.lanes)
        }
        if let words = check.refusedFor {
            #expect(reason?.contains(words) == true, "\(reason ?? "accepted")")
        } else {
            #expect(reason == nil)
        }
    }

    @Test("The standard is Argon2id at 64 MiB, 3 passes, 4 lanes in version 2, PBKDF2 at 600,000 rounds in version 1")
    func standard() throws {
        #expect(PasswordKeyDerivation.standard.slotKDF == .argon2id(memoryKiB: 65_536, passes: 3, lanes: 4))
        #expect(PasswordKeyDerivation.recommendedArgon2id.slotKDF == .argon2id(memoryKiB: 65_536, passes: 3, lanes: 4))
        #expect(try PasswordKeyDerivation.standard.version1Iterations(because: "test").count == 600_000)
        #expect(PasswordKeyDerivation.pbkdf2(.insecureForTesting(1_000)).slotKDF == .pbkdf2(iterations: 1_000))
        #expect(try PasswordKeyDerivation.pbkdf2(.insecureForTesting(1_000)).version1Iterations(because: "test").count == 1_000)
        let reason = Self.refusal { () throws(KeychainError) in
            _ = try PasswordKeyDerivation.recommendedArgon2id.version1Iterations(because: "the reason given")
            return .standard
        }
        #expect(reason?.contains("Argon2id password slots need format version 2, and the reason given") == true, "\(reason ?? "none")")
    }

    @Test("CreationOptions: passwordIterations sets PBKDF2 and reads its rounds; the default options use the standard")
    func creationOptions() {
        var options = Keychain.CreationOptions()
        #expect(options.passwordKeyDerivation == .standard)
        options.passwordIterations = .insecureForTesting(2_000)
        #expect(options.passwordKeyDerivation == .pbkdf2(.insecureForTesting(2_000)))
        #expect(options.passwordIterations == .insecureForTesting(2_000))
        #expect(Keychain.CreationOptions(passwordIterations: .standard).passwordKeyDerivation == .pbkdf2(.standard))
        options.passwordKeyDerivation = .recommendedArgon2id
        #expect(options.passwordIterations == .standard)
    }
}
