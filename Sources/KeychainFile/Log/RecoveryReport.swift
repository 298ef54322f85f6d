/// What a recovering open (``Keychain/OpenOptions/recover``) could not read in a keychain file.
///
/// For example:
/// ```swift
/// let keychain = try Keychain.open(at: path, credential: credential, options: .init(recover: true))
/// if let report = keychain.recovery, report.isDamaged {
///     for damage in report.damage { print(damage) }
/// }
/// ```
public struct RecoveryReport: Sendable, Equatable {
    /// Everything that could not be read, in file order; empty when the file verified whole.
    public let damage: [Damage]

    /// Whether anything could not be read.
    public var isDamaged: Bool { !damage.isEmpty }
    /// The ids of the items whose latest version could not be read, which the keychain does not serve.
    public var lostItemIDs: [ItemID] { damage.compactMap { $0.loss == .item ? $0.itemID : nil } }
    /// How many damaged item versions could not be tied to an item id.
    public var unidentifiedLossCount: Int { damage.filter { $0.loss == .item && $0.itemID == nil }.count }
}
