// The bitsliced representation of eight AES states, and the linear layers of the cipher on it.
//
// Why bitslicing: the usual fast AES reads tables indexed by key- and data-dependent bytes, and which cache
// lines those reads touch leaks the key to anyone who can time the process. Here no memory address and no
// branch depends on a secret: the eight blocks are transposed so that each 128-bit register ("plane") holds
// one bit position of every byte of every block, and the whole cipher becomes a fixed sequence of
// AND/XOR/shuffle instructions on eight planes, the same for every key and every input.
//
// Layout. A batch holds eight blocks. Plane b (b = 0 … 7, 0 = least significant) is a SIMD2<UInt64>,
// i.e. 16 bytes; its byte p holds bit b of byte p of each block, block k in bit k. Byte positions are
// row-major: p = 4·row + column, so each 32-bit element of a plane is one row of the AES state. A row
// shift of the state is then a permutation of 32-bit elements (one `pshufd`), and a column shift inside
// the rows is a permutation of bytes inside each 32-bit element.
//
// Fixslicing. ShiftRows is not performed. Instead the stored state keeps a column offset m (0 … 3): true
// byte (r, c) is stored at (r, c + m·r mod 4). Skipping ShiftRows adds one to m; MixColumns adapts by
// taking the byte "one row down" from (r + 1, c + m) instead of (r + 1, c); round keys are stored with
// the offset their round has. The input is laid out at the offset that makes the final offset 0, so the
// output needs no correction. This saves a full ShiftRows per round at the price of one byte rotation in
// half of the rounds' MixColumns.
//
// The S-box (AESSBoxCircuit) is a straight-line Boolean circuit over the planes. It computes S(x) ⊕ 0x63;
// the constant is folded into the round keys, which is valid because ShiftRows, MixColumns and
// InvMixColumns all map the all-0x63 state to itself.

#if _endian(big)
// The planes are reinterpreted as 16 bytes, four 32-bit rows and eight 16-bit halves by bit casts, which
// assumes little-endian lanes (every platform Swift ships for today).
#error("KeychainCrypto's bitsliced AES assumes a little-endian host")
#endif

/// One bit plane of eight bitsliced AES blocks: 16 bytes, one per state position.
typealias Plane = SIMD2<UInt64>

// Whole-register bitwise operations on planes.
//
// The standard library implements `^`, `&`, `|` and `~` on SIMD types lane by lane; LLVM's vectoriser
// usually turns them back into vector instructions, but not across a block as large as the S-box circuit,
// which then runs as scalar code on both halves (more than twice the instructions). The same operations on
// SIMDMask are single vector instructions, and a mask is just a vector of lane-sized integers, so these
// overloads reinterpret the planes as masks for the duration of one operation. They are chosen over the
// generic ones wherever a `Plane` (SIMD2<UInt64>) is combined inside this module, including in the
// generic S-box circuit through BitsliceWord. The results are bit-for-bit those of the generic operators;
// the tests run every vector through them.
extension SIMD2 where Scalar == UInt64 {
    @usableFromInline typealias Mask = SIMDMask<SIMD2<Int64>>

    @inline(__always) @usableFromInline
    static func ^ (lhs: Self, rhs: Self) -> Self {
        unsafeBitCast(unsafeBitCast(lhs, to: Mask.self) .^ unsafeBitCast(rhs, to: Mask.self), to: Self.self)
    }

    @inline(__always) @usableFromInline
    static func & (lhs: Self, rhs: Self) -> Self {
        unsafeBitCast(unsafeBitCast(lhs, to: Mask.self) .& unsafeBitCast(rhs, to: Mask.self), to: Self.self)
    }

    @inline(__always) @usableFromInline
    static func | (lhs: Self, rhs: Self) -> Self {
        unsafeBitCast(unsafeBitCast(lhs, to: Mask.self) .| unsafeBitCast(rhs, to: Mask.self), to: Self.self)
    }

    @inline(__always) @usableFromInline
    static prefix func ~ (operand: Self) -> Self {
        unsafeBitCast(.!unsafeBitCast(operand, to: Mask.self), to: Self.self)
    }

    @inline(__always) @usableFromInline
    static func ^= (lhs: inout Self, rhs: Self) { lhs = lhs ^ rhs }
}

/// Eight AES states in bitsliced form: `q0` … `q7` are the bit planes, `q0` the least significant.
struct AESPlanes {
    var q0, q1, q2, q3, q4, q5, q6, q7: Plane

    @inline(__always)
    init(_ q0: Plane, _ q1: Plane, _ q2: Plane, _ q3: Plane, _ q4: Plane, _ q5: Plane, _ q6: Plane, _ q7: Plane) {
        (self.q0, self.q1, self.q2, self.q3, self.q4, self.q5, self.q6, self.q7) = (q0, q1, q2, q3, q4, q5, q6, q7)
    }

    /// Loads eight 16-byte blocks, already in the stored (row-major, offset) byte order, from `blocks`
    /// (128 bytes) and transposes them into planes.
    @inline(__always)
    init(transposing blocks: UnsafeRawPointer) {
        // Whole-register loads (the host is little-endian, checked above), so the transposition stays in
        // vector registers.
        @inline(__always) func load(_ index: Int) -> Plane {
            blocks.loadUnaligned(fromByteOffset: 16 * index, as: Plane.self)
        }
        self.init(load(0), load(1), load(2), load(3), load(4), load(5), load(6), load(7))
        transpose()
    }

    /// Transposes planes back into eight blocks (in stored byte order) and writes them to `blocks`.
    @inline(__always)
    func storeTransposed(to blocks: UnsafeMutableRawPointer) {
        var copy = self
        copy.transpose()
        @inline(__always) func store(_ plane: Plane, _ index: Int) {
            blocks.storeBytes(of: plane, toByteOffset: 16 * index, as: Plane.self)
        }
        store(copy.q0, 0); store(copy.q1, 1); store(copy.q2, 2); store(copy.q3, 3)
        store(copy.q4, 4); store(copy.q5, 5); store(copy.q6, 6); store(copy.q7, 7)
    }

    /// Transposes, in every byte position at once, the 8 × 8 bit matrix whose rows are the registers and
    /// whose columns are the bits of the byte: bit j of register i trades places with bit i of register j.
    ///
    /// Three rounds of "swap-move": the round with distance s exchanges bit s of the register index with
    /// bit s of the bit index. The masks keep every move inside its byte. Involutive, so the same code
    /// turns blocks into planes and planes back into blocks.
    @inline(__always)
    mutating func transpose() {
        let m1 = Plane(repeating: 0x5555_5555_5555_5555)
        let m2 = Plane(repeating: 0x3333_3333_3333_3333)
        let m4 = Plane(repeating: 0x0f0f_0f0f_0f0f_0f0f)
        swapMove(&q0, &q1, 1, m1); swapMove(&q2, &q3, 1, m1)
        swapMove(&q4, &q5, 1, m1); swapMove(&q6, &q7, 1, m1)
        swapMove(&q0, &q2, 2, m2); swapMove(&q1, &q3, 2, m2)
        swapMove(&q4, &q6, 2, m2); swapMove(&q5, &q7, 2, m2)
        swapMove(&q0, &q4, 4, m4); swapMove(&q1, &q5, 4, m4)
        swapMove(&q2, &q6, 4, m4); swapMove(&q3, &q7, 4, m4)
    }

    /// XORs eight round-key planes starting at `key` into the state.
    @inline(__always)
    mutating func addRoundKey(_ key: UnsafePointer<Plane>) {
        q0 ^= key[0]; q1 ^= key[1]; q2 ^= key[2]; q3 ^= key[3]
        q4 ^= key[4]; q5 ^= key[5]; q6 ^= key[6]; q7 ^= key[7]
    }

    /// SubBytes without its constant: every byte x becomes S(x) ⊕ 0x63.
    @inline(__always)
    mutating func subBytes() {
        AESSBoxCircuit.forward(&q0, &q1, &q2, &q3, &q4, &q5, &q6, &q7)
    }

    /// InvSubBytes without its constant: every byte y becomes S⁻¹(y ⊕ 0x63).
    @inline(__always)
    mutating func inverseSubBytes() {
        AESSBoxCircuit.inverse(&q0, &q1, &q2, &q3, &q4, &q5, &q6, &q7)
    }

    /// MixColumns on a state stored with column offset `offset` (a constant after inlining).
    ///
    /// With a = the byte itself and b, c, d the bytes one, two and three rows down the same true column,
    /// the result is 2a ⊕ 3b ⊕ c ⊕ d = 2u ⊕ b ⊕ (c ⊕ d) with u = a ⊕ b, and c ⊕ d is u two rows down.
    /// Multiplication by 2 on planes is a fixed rewiring plus three XORs (reduction by x⁸ + x⁴ + x³ + x + 1).
    @inline(__always)
    mutating func mixColumns(offset: Int) {
        let n0 = oneRowDown(q0, offset), n1 = oneRowDown(q1, offset)
        let n2 = oneRowDown(q2, offset), n3 = oneRowDown(q3, offset)
        let n4 = oneRowDown(q4, offset), n5 = oneRowDown(q5, offset)
        let n6 = oneRowDown(q6, offset), n7 = oneRowDown(q7, offset)
        let u0 = q0 ^ n0, u1 = q1 ^ n1, u2 = q2 ^ n2, u3 = q3 ^ n3
        let u4 = q4 ^ n4, u5 = q5 ^ n5, u6 = q6 ^ n6, u7 = q7 ^ n7
        q0 = u7 ^ n0 ^ twoRowsDown(u0, offset)
        q1 = u0 ^ u7 ^ n1 ^ twoRowsDown(u1, offset)
        q2 = u1 ^ n2 ^ twoRowsDown(u2, offset)
        q3 = u2 ^ u7 ^ n3 ^ twoRowsDown(u3, offset)
        q4 = u3 ^ u7 ^ n4 ^ twoRowsDown(u4, offset)
        q5 = u4 ^ n5 ^ twoRowsDown(u5, offset)
        q6 = u5 ^ n6 ^ twoRowsDown(u6, offset)
        q7 = u6 ^ n7 ^ twoRowsDown(u7, offset)
    }

    /// InvMixColumns on a state stored with column offset `offset`.
    ///
    /// Uses InvMixColumns = MixColumns ∘ P, where P maps each column byte a_r to a_r ⊕ 4·(a_r ⊕ a_{r+2})
    /// (the matrix of P is circ(05, 00, 04, 00); circ(02, 03, 01, 01) · circ(05, 00, 04, 00) =
    /// circ(0e, 0b, 0d, 09)).
    @inline(__always)
    mutating func inverseMixColumns(offset: Int) {
        let v0 = q0 ^ twoRowsDown(q0, offset), v1 = q1 ^ twoRowsDown(q1, offset)
        let v2 = q2 ^ twoRowsDown(q2, offset), v3 = q3 ^ twoRowsDown(q3, offset)
        let v4 = q4 ^ twoRowsDown(q4, offset), v5 = q5 ^ twoRowsDown(q5, offset)
        let v6 = q6 ^ twoRowsDown(q6, offset), v7 = q7 ^ twoRowsDown(q7, offset)
        // 4·v: bit i of 4v is v_{i−2} plus the reduction terms of v6 and v7 (x⁸ = x⁴ + x³ + x + 1).
        q0 ^= v6
        q1 ^= v6 ^ v7
        q2 ^= v0 ^ v7
        q3 ^= v1 ^ v6
        q4 ^= v2 ^ v6 ^ v7
        q5 ^= v3 ^ v7
        q6 ^= v4
        q7 ^= v5
        mixColumns(offset: offset)
    }
}

/// Exchanges the bits of `a` selected by `mask << shift` with the bits of `b` selected by `mask`.
@inline(__always)
private func swapMove(_ a: inout Plane, _ b: inout Plane, _ shift: UInt64, _ mask: Plane) {
    let t = ((a &>> shift) ^ b) & mask
    b ^= t
    a ^= t &<< shift
}

// MARK: - Moving bytes between state positions

/// The plane with every row replaced by the row `rows` below it (rows wrap): element r ← element r + rows.
@inline(__always)
private func rotateRows(_ x: Plane, by rows: Int) -> Plane {
    let v = unsafeBitCast(x, to: SIMD4<UInt32>.self)
    switch rows & 3 {
    case 1: return unsafeBitCast(SIMD4<UInt32>(v[1], v[2], v[3], v[0]), to: Plane.self)
    case 2: return unsafeBitCast(SIMD4<UInt32>(v[2], v[3], v[0], v[1]), to: Plane.self)
    case 3: return unsafeBitCast(SIMD4<UInt32>(v[3], v[0], v[1], v[2]), to: Plane.self)
    default: return x
    }
}

/// The plane with every byte replaced by the byte `columns` to its right in the same row (wrapping):
/// byte c of each 32-bit row ← byte c + columns.
///
/// Written as masked 64-bit lane shifts rather than 32-bit rotations: LLVM turns a vector rotate into
/// scalar code on baseline x86-64 (no vector rotate instruction), while shifts and masks stay in SSE2.
@inline(__always)
private func rotateColumns(_ x: Plane, by columns: Int) -> Plane {
    switch columns & 3 {
    case 1:
        return ((x &>> 8) & Plane(repeating: 0x00ff_ffff_00ff_ffff)) | ((x &<< 24) & Plane(repeating: 0xff00_0000_ff00_0000))
    case 2:
        let h = unsafeBitCast(x, to: SIMD8<UInt16>.self)
        return unsafeBitCast(SIMD8<UInt16>(h[1], h[0], h[3], h[2], h[5], h[4], h[7], h[6]), to: Plane.self)
    case 3:
        return ((x &<< 8) & Plane(repeating: 0xffff_ff00_ffff_ff00)) | ((x &>> 24) & Plane(repeating: 0x0000_00ff_0000_00ff))
    default:
        return x
    }
}

/// For a state stored with column offset m, the byte one row down in the same true column:
/// true (r + 1, c) is stored at (r + 1, c + m(r + 1)), i.e. one row and m columns away.
@inline(__always)
private func oneRowDown(_ x: Plane, _ offset: Int) -> Plane {
    rotateColumns(rotateRows(x, by: 1), by: offset)
}

/// For a state stored with column offset m, the byte two rows down in the same true column.
@inline(__always)
private func twoRowsDown(_ x: Plane, _ offset: Int) -> Plane {
    rotateColumns(rotateRows(x, by: 2), by: 2 * offset)
}

// MARK: - Byte order of single blocks

/// The byte order of one 16-byte block in a batch: stored position of each natural AES position.
///
/// A natural block (FIPS 197 order, byte r + 4c is row r, column c) is stored row-major with column
/// offset m at position 4r + ((c + m·r) mod 4).
@inline(__always)
func storedPosition(ofNatural index: Int, offset: Int) -> Int {
    let row = index & 3
    let column = index >> 2
    return 4 * row + ((column + offset * row) & 3)
}
