/// Why a record cannot be applied: it breaks uniqueness, or deletes an item that is not there.
enum IndexConflict: Error, Equatable {
    case duplicatePrimaryKey(ItemID)
    case unknownItem(ItemID)
    /// A put for a live item id with a different class (SPEC.md §8.3: an item keeps its class).
    case classChange(ItemID)
}
