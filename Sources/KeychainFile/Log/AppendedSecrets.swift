/// The sealed secrets of the puts an append wrote, in entry order: what the index gives those items.
struct AppendedSecrets {
    let count: Int
    private let secretOfPut: (Int) -> SealedSecret

    init(count: Int, secret: @escaping (Int) -> SealedSecret) {
        self.count = count
        secretOfPut = secret
    }

    /// The sealed secret of the `put`-th put.
    func secret(_ put: Int) -> SealedSecret { secretOfPut(put) }
}
