/// A GHASH state derived from H, in memory of its own that is zeroed when released: such a state is key material
/// (see the top of this file).
///
/// `@unchecked Sendable`: the state is written in `init` and only read afterwards.
final class GHASHStateStorage: @unchecked Sendable {
    private let pointer: UnsafeMutablePointer<GHASH>

    /// The state after absorbing `blockCount` whole blocks at `blocks` from zero under `key`.
    init(absorbing blocks: UnsafeRawPointer, blockCount: Int, key: GHASHKey) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: GHASH())
        pointer.pointee.update(blocks: blocks, count: blockCount, key: key)
    }

    var value: GHASH {
        @inline(__always) get { pointer.pointee }
    }

    deinit {
        secureZero(UnsafeMutableRawPointer(pointer), count: MemoryLayout<GHASH>.size)
        pointer.deallocate()
    }
}
