/// The key-derivation rounds reading one PKCS #12 file may spend in all: the MAC's and every encrypted
/// SafeContents' and private key's. Each derivation is bounded by ``PKCS12Archive/maximumIterationCount``; this
/// bounds their sum, so that a file of many bags cannot make reading it take hours either.
///
/// For example:
/// ```swift
/// let budget = PKCS12WorkBudget()
/// try budget.charge(600_000)   // a derivation about to run
/// ```
final class PKCS12WorkBudget {
    /// The rounds one file may ask for in all: five derivations at the largest count each, about 20 s here.
    static let maximumTotalRounds = 5 * PKCS12Archive.maximumIterationCount

    /// The rounds this budget allows: ``maximumTotalRounds`` but in tests.
    let limit: Int
    /// The rounds charged so far.
    private(set) var spent = 0

    init(limit: Int = maximumTotalRounds) {
        self.limit = limit
    }

    /// Charges `rounds` for a derivation about to run.
    ///
    /// - Throws: ``PKCS12Error/tooMuchKeyDerivation(rounds:)`` when the total would pass ``limit``;
    ///   nothing is charged then.
    func charge(_ rounds: Int) throws(PKCS12Error) {
        let (total, overflow) = spent.addingReportingOverflow(rounds)
        guard !overflow, total <= limit else {
            throw .tooMuchKeyDerivation(rounds: overflow ? Int.max : total)
        }
        spent = total
    }
}
