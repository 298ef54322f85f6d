/// Work that ``WindowWorkers`` share out: a window whose shares any thread may claim and open
/// (``WindowOpening``, whatever the digests its decoder computes).
protocol SharedWindow: AnyObject, Sendable {
    /// Claims shares one at a time and opens each, until none is left.
    func openShares()
}
