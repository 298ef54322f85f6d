/// A read-only run of bytes inside an ``ItemBytes`` object: what ``ItemAttributes`` keeps its encoding in
/// and ``SealedSecret`` its box. Equal when the bytes are equal, wherever they sit. Making or copying a view
/// allocates nothing.
struct ByteView: @unchecked Sendable, Equatable, RandomAccessCollection {
    // Sendable: the object is never written after it is made (see ItemBytes).
    let storage: ItemBytes
    private let start: UInt32
    private let length: UInt32

    init(_ storage: ItemBytes, offset: Int, count: Int) {
        self.storage = storage
        start = UInt32(truncatingIfNeeded: offset)
        length = UInt32(truncatingIfNeeded: count)
    }

    /// A view of a new object holding a copy of `bytes` (as an attributes part).
    init(copying bytes: UnsafeRawBufferPointer) {
        self.init(ItemBytes.make(attributes: bytes), offset: 0, count: bytes.count)
    }

    /// A view of a new object holding a copy of `bytes`.
    init(copying bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { ByteView(copying: $0) }
    }

    static let empty = ByteView(copying: [])

    var offset: Int { Int(start) }
    var count: Int { Int(length) }
    var startIndex: Int { 0 }
    var endIndex: Int { Int(length) }

    subscript(position: Int) -> UInt8 {
        precondition(position >= 0 && position < count, "index out of range")
        return withUnsafeBytes { $0[position] }
    }

    /// Calls `body` with the viewed bytes.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointerToElements { elements in
            try body(UnsafeRawBufferPointer(start: elements + Int(start), count: Int(length)))
        }
    }

    /// `withUnsafeBytes` with a typed error.
    func withBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        let outcome: Swift.Result<Result, Failure> = withUnsafeBytes { raw in
            Swift.Result { () throws(Failure) -> Result in try body(raw) }
        }
        return try outcome.get()
    }

    func withContiguousStorageIfAvailable<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result? {
        try storage.withUnsafeMutablePointerToElements { elements in
            try body(UnsafeBufferPointer(start: elements + Int(start), count: Int(length)))
        }
    }

    static func == (lhs: ByteView, rhs: ByteView) -> Bool {
        lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in left.elementsEqualBytes(right) } }
    }
}
