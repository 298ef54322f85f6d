/// One Argon2 computation's memory and shape: p lanes of q = m' / p blocks, each lane cut into four
/// segments of q / 4 blocks (the slices, RFC 9106 §3.2), and how to fill one segment (§3.4).
///
/// The segments of one slice are independent of one another, so the lanes of a slice may be filled on
/// several threads at once (see ``Argon2Memory``).
struct Argon2Instance: Sendable {
    /// The number of slices (synchronisation points) per pass, SL in RFC 9106.
    static let sliceCount = 4
    /// The number of reference addresses in one address block.
    static let addressesPerBlock = 128

    let memory: Argon2Memory
    let variant: Argon2Variant
    /// p, the number of lanes.
    let lanes: Int
    /// q = m' / p, the number of blocks (columns) in each lane.
    let laneLength: Int
    /// q / 4, the number of blocks in each segment.
    let segmentLength: Int
    /// t, the number of passes.
    let passes: Int

    /// - Precondition: `memory.blockCount` is a multiple of `4 · lanes` and at least `8 · lanes`.
    init(memory: Argon2Memory, variant: Argon2Variant, lanes: Int, passes: Int) {
        self.memory = memory
        self.variant = variant
        self.lanes = lanes
        self.passes = passes
        laneLength = memory.blockCount / lanes
        segmentLength = laneLength / Self.sliceCount
    }

    /// Computes the blocks of lane `lane` in slice `slice` of pass `pass` (RFC 9106 §3.2 steps 5–6):
    /// `B[i][j] = G(B[i][j−1], B[l][z])`, XORed into the old `B[i][j]` from the second pass on.
    ///
    /// In data-independent segments (Argon2i, and the first two slices of the first pass of Argon2id), the
    /// reference block `B[l][z]` is taken from address blocks computed from the pass, lane, slice, memory
    /// size, pass count, type and a counter only, never from the password: the sequence of blocks read
    /// there is the same for every password.
    ///
    /// - Parameter observe: Called with the index of each reference block, in order; for tests only.
    func fillSegment(pass: Int, slice: Int, lane: Int, observe: ((_ referenceBlock: Int) -> Void)? = nil) {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: KDF.Argon2.compressionScratchWords + 256) { buffer in
            let scratch = buffer.baseAddress!
            let addressInput = scratch + KDF.Argon2.compressionScratchWords
            let addresses = addressInput + 128
            let dataIndependent = variant.usesDataIndependentAddressing(pass: pass, slice: slice)

            // Z = LE64(r) ‖ LE64(l) ‖ LE64(sl) ‖ LE64(m') ‖ LE64(t) ‖ LE64(y) ‖ LE64(i) ‖ zeros (§3.4.1.2);
            // each address block is G(0, G(0, Z)) after i is incremented, starting from i = 1.
            func nextAddresses() {
                addressInput[6] &+= 1
                KDF.Argon2.compress(addressInput, nil, into: addresses, xoring: false, scratch: scratch)
                KDF.Argon2.compress(addresses, nil, into: addresses, xoring: false, scratch: scratch)
            }
            if dataIndependent {
                addressInput.initialize(repeating: 0, count: 128)
                addressInput[0] = UInt64(pass)
                addressInput[1] = UInt64(lane)
                addressInput[2] = UInt64(slice)
                addressInput[3] = UInt64(memory.blockCount)
                addressInput[4] = UInt64(passes)
                addressInput[5] = UInt64(variant.rawValue)
            }

            // The first two blocks of each lane come from H' (§3.2 steps 3–4).
            var firstIndex = 0
            if pass == 0 && slice == 0 {
                firstIndex = 2
                if dataIndependent { nextAddresses() }
            }

            let laneStart = lane * laneLength
            for index in firstIndex..<segmentLength {
                let column = slice * segmentLength + index
                let current = laneStart + column
                let previous = column == 0 ? laneStart + laneLength - 1 : current - 1

                // J1 ‖ J2 as one little-endian word: J1 the low half, J2 the high half (§3.4.1).
                let pseudoRandom: UInt64
                if dataIndependent {
                    if index % Self.addressesPerBlock == 0 { nextAddresses() }
                    pseudoRandom = addresses[index % Self.addressesPerBlock]
                } else {
                    pseudoRandom = memory.block(previous)[0]
                }

                // §3.4.2: the first slice of the first pass references its own lane only.
                let referenceLane = pass == 0 && slice == 0 ? lane : Int((pseudoRandom >> 32) % UInt64(lanes))
                let referenceColumn = referenceColumn(
                    pass: pass, slice: slice, index: index, j1: pseudoRandom & 0xffff_ffff,
                    sameLane: referenceLane == lane)
                let reference = referenceLane * laneLength + referenceColumn
                observe?(reference)
                KDF.Argon2.compress(
                    memory.block(previous), memory.block(reference), into: memory.block(current),
                    xoring: pass > 0, scratch: scratch)
            }
            // The scratch held R and P(R) of password-derived blocks.
            secureZero(scratch, count: KDF.Argon2.compressionScratchWords * 8)
        }
    }

    /// The column z of the reference block (RFC 9106 §3.4.2): J1 mapped, with a quadratic bias towards
    /// recent blocks, into the reference set W of blocks already computed and not being computed now.
    ///
    /// W holds the reference lane's blocks of the finished slices: in the first pass the slices before this
    /// one, later the three slices before this one (wrapping round the lane). In this block's own lane it
    /// adds this segment's blocks before the previous block; in another lane, when this block is the first
    /// of its segment, it leaves out that lane's last finished block.
    @inline(__always)
    func referenceColumn(pass: Int, slice: Int, index: Int, j1: UInt64, sameLane: Bool) -> Int {
        let finished = pass == 0 ? slice * segmentLength : laneLength - segmentLength
        let areaSize: Int
        if sameLane {
            areaSize = finished + index - 1
        } else {
            areaSize = finished - (index == 0 ? 1 : 0)
        }
        // x = J1² / 2^32;  y = |W| · x / 2^32;  zz = |W| − 1 − y  (all < 2^64: |W| < 2^32).
        let x = (j1 &* j1) >> 32
        let y = (UInt64(areaSize) &* x) >> 32
        let relative = UInt64(areaSize) - 1 - y
        // W starts after the current slice in later passes, at the lane's start in the first.
        let start = pass == 0 || slice == Self.sliceCount - 1 ? 0 : (slice + 1) * segmentLength
        return (start + Int(relative)) % laneLength
    }
}
