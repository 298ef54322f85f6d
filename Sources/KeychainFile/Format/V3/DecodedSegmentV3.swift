/// A group segment of a decoded version 3 record: opened, when the reader follows the group's chain (it holds the
/// group's key), else kept as its bytes — the key id and lengths are all a reader without the key learns of it.
enum DecodedSegmentV3: Sendable, Equatable {
    case page(OpenedPageV3)
    case opaque(OpaqueSegmentV3)

    var keyID: UInt8 {
        switch self {
        case .page(let page): return page.keyID
        case .opaque(let segment): return segment.keyID
        }
    }
}
