/// The bytes a keychain keeps per live item, in one heap block: the item's encoded attributes, the chain
/// value its secret box was sealed after and the sealed secret box, back to back:
///
/// ```
/// attributes (attributesByteCount) ‖ chain value (16, if hasChain) ‖ secret box (boxByteCount)
/// ```
///
/// One allocation per item instead of an array for the attributes and another for the box: each array
/// costs a 32-byte header and a malloc chunk of its own (together about 400 bytes of heap for 290 bytes
/// of payload). Either part may be empty: attributes built on their own keep only attributes, a sealed secret
/// on its own only its chain value and box.
///
/// Immutable once sealed: the bytes are written by ``make(attributesByteCount:hasChain:boxByteCount:initialize:)``
/// before the object is handed out, and never after, so that any number of ``ByteView``s may read them from
/// any thread. The one exception is a *reserved* object (``makeReserved(attributes:secret:)``): a batch makes
/// one for each item it adds, with zeros where the chain value, the nonce and the tag will go and the plaintext
/// secret where the ciphertext will, so that the item is one allocation from the start and the batch keeps no
/// array per secret; the record encoder seals the secret in place once, in two steps: the box with its chain
/// value still zero (``sealReserved(seal:)``), possibly on another thread than the batch's while the batch's
/// thread waits for it, then the chain value and the box's final tag (``completeReserved(chain:complete:)``).
/// Until then only that batch holds the object (its index, moved in, and its entries), nothing reads the box
/// part as a box (an item the batch put has its secret read from the batch's entries, ``reservedSecret()``),
/// and every write happens under the keychain's write lock. A batch that is abandoned wipes the plaintext
/// (``wipeReserved()``). The other exception is an *arena* (``makeArena(byteCount:)``): the record encoder
/// seals the secrets of puts that have no reserved block (an update's; a rewrite only writes its boxes) into one object per
/// record, each as chain value ‖ box in a part of its own, in the same two steps, and hands out views of them
/// only once the record is sealed; and the threads opening a window of a large record decrypt each put's
/// attributes into a part of the window's arena (``writeInArena(_:_:)``), and make a view of a part only once
/// it is written and checked.
final class ItemBytes: ManagedBuffer<ItemBytes.Layout, UInt8> {
    /// The sizes of the parts (8 bytes, so that the bytes start 24 bytes into the object).
    struct Layout {
        /// The attributes' size; the top bit tells whether the chain value and box are still to be sealed, the
        /// next one whether a record encoder has claimed them (see ``ItemBytes/claimReserved()``).
        private var attributesField: UInt32
        /// The secret box's size; the top bit tells whether a chain value precedes the box.
        private let boxField: UInt32

        private static let flag: UInt32 = 1 << 31
        private static let claimedFlag: UInt32 = 1 << 30

        init(attributesByteCount: Int, hasChain: Bool, boxByteCount: Int, isReserved: Bool = false) {
            // Attributes are at most 64 × (7 + 65,535) bytes and a box at most 1 MiB + 28 (SPEC.md §11).
            precondition(attributesByteCount < Int(Self.claimedFlag) && boxByteCount < Int(Self.flag), "item bytes too large")
            attributesField = UInt32(attributesByteCount) | (isReserved ? Self.flag : 0)
            boxField = UInt32(boxByteCount) | (hasChain ? Self.flag : 0)
        }

        var attributesByteCount: Int { Int(attributesField & ~(Self.flag | Self.claimedFlag)) }
        /// Whether the chain value and the box are zeros still to be sealed (see ``ItemBytes``).
        var isReserved: Bool { attributesField & Self.flag != 0 }
        /// Whether a record encoder has claimed a reserved object's box (see ``ItemBytes/claimReserved()``).
        var isClaimed: Bool { attributesField & Self.claimedFlag != 0 }
        mutating func markClaimed() { attributesField |= Self.claimedFlag }
        mutating func markSealed() { attributesField &= ~(Self.flag | Self.claimedFlag) }
        var hasChain: Bool { boxField & Self.flag != 0 }
        var boxByteCount: Int { Int(boxField & ~Self.flag) }
        var chainByteCount: Int { hasChain ? 16 : 0 }
        /// Where the secret box starts.
        var boxOffset: Int { attributesByteCount + chainByteCount }
        var totalByteCount: Int { boxOffset + boxByteCount }
    }

    /// A new object of the given layout whose bytes `initialize` writes (all of them: they start
    /// uninitialized). The object must not be changed afterwards.
    static func make(
        attributesByteCount: Int, hasChain: Bool, boxByteCount: Int, initialize: (UnsafeMutableRawBufferPointer) -> Void
    ) -> ItemBytes {
        let layout = Layout(attributesByteCount: attributesByteCount, hasChain: hasChain, boxByteCount: boxByteCount)
        let total = layout.totalByteCount
        let object = unsafeDowncast(create(minimumCapacity: total) { _ in layout }, to: ItemBytes.self)
        object.withUnsafeMutablePointerToElements { elements in
            initialize(UnsafeMutableRawBufferPointer(start: elements, count: total))
        }
        return object
    }

    /// An object holding only `attributes`.
    static func make(attributes: UnsafeRawBufferPointer) -> ItemBytes {
        make(attributesByteCount: attributes.count, hasChain: false, boxByteCount: 0) { out in
            out.copyMemory(from: attributes)
        }
    }

    /// An object holding `attributes`, `chain` (empty or 16 bytes) and `box`.
    static func make(attributes: UnsafeRawBufferPointer, chain: UnsafeRawBufferPointer, box: UnsafeRawBufferPointer) -> ItemBytes {
        precondition(chain.isEmpty || chain.count == 16, "a chain value is a 16-byte tag")
        return make(attributesByteCount: attributes.count, hasChain: !chain.isEmpty, boxByteCount: box.count) { out in
            var offset = 0
            for part in [attributes, chain, box] where !part.isEmpty {
                UnsafeMutableRawBufferPointer(rebasing: out[offset..<(offset + part.count)]).copyMemory(from: part)
                offset += part.count
            }
        }
    }

    /// An object holding `attributes`, then zeros for a chain value, and a box of `secret.count + 28` bytes
    /// with `secret` where the ciphertext goes and zeros for the nonce and the tag: what
    /// ``sealReserved(seal:)`` and ``completeReserved(chain:complete:)`` seal in place later.
    static func makeReserved(attributes: ByteView, secret: [UInt8]) -> ItemBytes {
        makeReserved(attributesByteCount: attributes.count, secret: secret) { out in
            attributes.withUnsafeBytes { out.copyMemory(from: $0) }
        }
    }

    /// ``makeReserved(attributes:secret:)`` with the attributes written by `writeAttributes` into the
    /// `attributesByteCount` bytes it is given, which it must fill.
    static func makeReserved(
        attributesByteCount: Int, secret: [UInt8], writeAttributes: (UnsafeMutableRawBufferPointer) -> Void
    ) -> ItemBytes {
        let boxByteCount = secret.count + Format.boxOverhead
        let total = attributesByteCount + 16 + boxByteCount
        let object = unsafeDowncast(create(minimumCapacity: total) { _ in
            Layout(attributesByteCount: attributesByteCount, hasChain: true, boxByteCount: boxByteCount, isReserved: true)
        }, to: ItemBytes.self)
        object.withUnsafeMutablePointerToElements { elements in
            let out = UnsafeMutableRawBufferPointer(start: elements, count: total)
            writeAttributes(UnsafeMutableRawBufferPointer(rebasing: out[0..<attributesByteCount]))
            UnsafeMutableRawBufferPointer(rebasing: out[attributesByteCount...]).initializeMemory(as: UInt8.self, repeating: 0)
            let secretStart = attributesByteCount + 16 + Format.nonceSize
            secret.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[secretStart..<(secretStart + $0.count)]).copyMemory(from: $0) }
        }
        return object
    }

    /// An arena of `byteCount` zero bytes for ``sealInArena(at:boxByteCount:seal:)`` (see ``ItemBytes``).
    static func makeArena(byteCount: Int) -> ItemBytes {
        make(attributesByteCount: 0, hasChain: false, boxByteCount: byteCount) { out in
            out.initializeMemory(as: UInt8.self, repeating: 0)
        }
    }

    /// An arena of `byteCount` bytes left as the allocator gave them, for parts that are each written whole
    /// (``writeInArena(_:_:)``) before anything reads them: a window's attribute plaintexts, where zeroing first
    /// cost the calling thread a pass over every attribute byte of the file. Only the parts written are ever read.
    static func makeUnzeroedArena(byteCount: Int) -> ItemBytes {
        let layout = Layout(attributesByteCount: 0, hasChain: false, boxByteCount: byteCount)
        return unsafeDowncast(create(minimumCapacity: byteCount) { _ in layout }, to: ItemBytes.self)
    }

    /// Has `seal` write a `boxByteCount`-byte box at `offset + 16` of an arena, leaving the 16 bytes at `offset`
    /// (where the chain value goes) at zero; ``completeInArena(at:chain:boxByteCount:complete:)`` finishes it.
    /// The caller (the record encoder) writes each part of an arena once, possibly on several threads, each
    /// part on one, and nothing reads a part before it is completed.
    func sealInArena<Failure: Error>(
        at offset: Int, boxByteCount: Int, seal: (UnsafeMutableRawBufferPointer) throws(Failure) -> Void
    ) throws(Failure) {
        let layout = header
        precondition(layout.attributesByteCount == 0 && !layout.hasChain, "an arena holds chain values and boxes")
        precondition(offset >= 0 && offset + 16 + boxByteCount <= layout.boxByteCount, "a part of the arena")
        try write(at: (offset + 16)..<(offset + 16 + boxByteCount), seal)
    }

    /// Writes `chain` (16 bytes) at `offset` of an arena and has `complete` finish the box after it (see
    /// ``sealInArena(at:boxByteCount:seal:)``); returns the view of the box.
    func completeInArena<Failure: Error>(
        at offset: Int, chain: [UInt8], boxByteCount: Int, complete: (UnsafeMutableRawBufferPointer) throws(Failure) -> Void
    ) throws(Failure) -> ByteView {
        let layout = header
        precondition(layout.attributesByteCount == 0 && !layout.hasChain && chain.count == 16, "an arena holds chain values and boxes")
        precondition(offset >= 0 && offset + 16 + boxByteCount <= layout.boxByteCount, "a part of the arena")
        write(chain, at: offset)
        try write(at: (offset + 16)..<(offset + 16 + boxByteCount), complete)
        return ByteView(self, offset: offset + 16, count: boxByteCount)
    }

    /// The plaintext secret a reserved object holds (see ``makeReserved(attributes:secret:)``), copied.
    func reservedSecret() -> [UInt8] {
        let layout = header
        precondition(layout.isReserved, "only a reserved object holds a plaintext secret")
        return withUnsafeMutablePointerToElements { elements in
            let start = UnsafeRawPointer(elements) + layout.boxOffset + Format.nonceSize
            return [UInt8](UnsafeRawBufferPointer(start: start, count: layout.boxByteCount - Format.boxOverhead))
        }
    }

    /// Overwrites the plaintext secret of a reserved object that will not be sealed (its batch was abandoned)
    /// with zeros. Nothing else holds the object then (see ``ItemBytes``).
    func wipeReserved() {
        let layout = header
        guard layout.isReserved else { return }
        withUnsafeMutablePointerToElements { elements in
            _ = UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(elements) + layout.boxOffset, count: layout.boxByteCount)
                .initializeMemory(as: UInt8.self, repeating: 0)
        }
    }

    /// Claims a reserved object's box for the record being encoded, which then seals it; returns false if the
    /// object is not reserved or was claimed already (two puts of one record never share a block: only a
    /// batch's own add keeps its secret in one). The record encoder calls this on the batch's thread.
    func claimReserved() -> Bool {
        withUnsafeMutablePointerToHeader { layout in
            guard layout.pointee.isReserved, !layout.pointee.isClaimed else { return false }
            layout.pointee.markClaimed()
            return true
        }
    }

    /// Has `seal` write the box of a reserved object in place (its plaintext is where the ciphertext goes),
    /// leaving the chain value at zero; ``completeReserved(chain:complete:)`` finishes it. The caller is the
    /// record encoder, on one thread for each object (see ``ItemBytes``).
    func sealReserved<Failure: Error>(seal: (UnsafeMutableRawBufferPointer) throws(Failure) -> Void) throws(Failure) {
        let layout = header
        precondition(layout.isReserved && layout.hasChain, "only a reserved object is sealed, once")
        try write(at: layout.boxOffset..<layout.totalByteCount, seal)
    }

    /// Writes the chain value (16 bytes) into a reserved object whose box ``sealReserved(seal:)`` wrote and has
    /// `complete` finish the box; the object is then sealed like any other.
    func completeReserved<Failure: Error>(
        chain: [UInt8], complete: (UnsafeMutableRawBufferPointer) throws(Failure) -> Void
    ) throws(Failure) {
        let layout = header
        precondition(layout.isReserved && layout.hasChain && chain.count == 16, "only a reserved object is sealed, once")
        write(chain, at: layout.attributesByteCount)
        try write(at: layout.boxOffset..<layout.totalByteCount, complete)
        withUnsafeMutablePointerToHeader { $0.pointee.markSealed() }
    }

    /// Has `body` write the part `range` of an arena and returns what it returns: how the threads opening a
    /// window of a large record decrypt each put's attributes into the window's arena (``WindowOpening``), each
    /// part on one thread, before any view of that part is made and handed on. No allocation per item, on threads
    /// whose allocator arenas would otherwise hold the blocks and take a lock for every one the calling thread frees.
    func writeInArena<Value, Failure: Error>(
        _ range: Range<Int>, _ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        precondition(header.attributesByteCount == 0 && !header.hasChain, "an arena")
        return try write(at: range, body)
    }

    /// Has `body` write bytes `range` of the object: the one place the record encoder writes a reserved
    /// object or an arena, and a window's opening an arena (see ``ItemBytes``).
    private func write<Value, Failure: Error>(
        at range: Range<Int>, _ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        let total = header.totalByteCount
        precondition(range.lowerBound >= 0 && range.upperBound <= total, "within the object")
        let outcome: Result<Value, Failure> = withUnsafeMutablePointerToElements { elements in
            let part = UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(elements) + range.lowerBound, count: range.count)
            return Result { () throws(Failure) in try body(part) }
        }
        return try outcome.get()
    }

    /// Copies the 16-byte `chain` to `offset` of the object (see ``write(at:_:)``).
    private func write(_ chain: [UInt8], at offset: Int) {
        write(at: offset..<(offset + 16)) { (part) -> Void in chain.withUnsafeBytes { part.copyMemory(from: $0) } }
    }

    var layout: Layout { header }

    /// Calls `body` with the object's bytes.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        let total = header.totalByteCount
        return try withUnsafeMutablePointerToElements { elements in
            try body(UnsafeRawBufferPointer(start: elements, count: total))
        }
    }

    /// The attributes part.
    var attributesView: ByteView { ByteView(self, offset: 0, count: header.attributesByteCount) }

    /// The secret box part.
    var boxView: ByteView { ByteView(self, offset: header.boxOffset, count: header.boxByteCount) }

    /// Whether this object holds exactly `attributes` (as its attributes part) followed by the chain value
    /// and box of `secret`, so that an item made of the two can keep this object rather than a copy.
    func holds(_ attributes: ByteView, _ secret: SealedSecret) -> Bool {
        let layout = header
        guard attributes.storage === self, attributes.offset == 0, attributes.count == layout.attributesByteCount else { return false }
        // The placeholder of a secret not sealed yet: an object holding only attributes, or a reserved one.
        if secret.box.count == 0 && !secret.hasChain { return (layout.boxByteCount == 0 && !layout.hasChain) || layout.isReserved }
        return layout.hasChain == secret.hasChain && layout.boxByteCount == secret.box.count
            && secret.box.storage === self && secret.box.offset == layout.boxOffset
    }
}

extension ItemAttributes {
    /// The most bytes beyond its own that attributes handed out of the library may keep alive.
    static let handedOutSurplusLimit = 256

    /// These attributes, in a block of their own when the block they view holds much more than them (an
    /// item's sealed secret, up to 1 MiB): what the library hands to callers, so that attributes someone
    /// keeps do not keep a secret's ciphertext, or a deleted or compacted-away item's block, alive. Attributes
    /// of an item with a small secret keep sharing its block (at most ``handedOutSurplusLimit`` bytes more).
    func detached() -> ItemAttributes {
        guard encoded.storage.layout.totalByteCount - encoded.count > Self.handedOutSurplusLimit else { return self }
        return encoded.withUnsafeBytes { ItemAttributes(itemClass: itemClass, count: count, encoded: ByteView(copying: $0)) }
    }
}
