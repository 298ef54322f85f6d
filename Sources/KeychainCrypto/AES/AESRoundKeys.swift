// AES key expansion (FIPS 197 §5.2) in constant time, and the bitsliced round keys built from it.
//
// SubWord is the only non-linear step. It runs through the same Boolean S-box circuit as the cipher,
// on a 64-bit word whose low four bits of plane b hold bit b of the word's four bytes, so no table is
// indexed by key bytes. Gathering bits into planes and spreading them back uses multiplications by
// constants whose partial products never overlap (explained at `gatherPlane`); integer multiplication
// takes the same time for every operand on the processors Swift targets.

/// The round keys of one AES key, bitsliced and laid out for the batch cipher in one direction.
///
/// Round key i occupies planes `8i … 8i + 7`; each plane byte is 0x00 or 0xff (the key bit broadcast to
/// all eight blocks). Keys 1 … rounds carry the folded 0x63 constant of the S-box (see AESBitslice).
/// The memory is zeroed when the schedule is released.
///
/// `@unchecked Sendable`: the planes are written only in `init` and read-only afterwards.
final class AESRoundKeys: @unchecked Sendable {
    enum Direction { case encryption, decryption }

    /// The schedule's planes and shape, without a reference to the schedule: valid while its owner keeps the
    /// schedule alive. A per-message value holds this rather than the schedule itself, so that threads using one
    /// key do not contend for the schedule's reference count (a retain and a release a message, each moving a
    /// cache line between cores).
    struct Unretained {
        let planes: UnsafePointer<Plane>
        let rounds: Int
        let inputOffset: Int
    }

    /// A view of the schedule for as long as something else keeps it alive.
    var unretained: Unretained { Unretained(planes: UnsafePointer(planes), rounds: rounds, inputOffset: inputOffset) }

    /// The number of rounds: 10, 12 or 14 for 128-, 192- and 256-bit keys.
    let rounds: Int
    /// The column offset (see AESBitslice) at which input blocks must be laid out.
    let inputOffset: Int
    let planes: UnsafeMutablePointer<Plane>
    private let planeCount: Int

    /// Expands `key` (16, 24 or 32 bytes).
    ///
    /// - Throws: `CryptoKitError.incorrectKeySize` for any other length.
    init(key: UnsafeRawBufferPointer, direction: Direction) throws(CryptoKitError) {
        guard key.count == 16 || key.count == 24 || key.count == 32 else { throw .incorrectKeySize }
        let rounds = key.count / 4 + 6
        self.rounds = rounds
        // Encryption skips ShiftRows `rounds` times and must end at offset 0, so it starts at −rounds;
        // decryption undoes it `rounds` times and starts at +rounds. For even round counts both are equal.
        inputOffset = rounds & 3
        planeCount = 8 * (rounds + 1)
        planes = .allocate(capacity: planeCount)
        planes.initialize(repeating: Plane(repeating: 0), count: planeCount)

        let scheduleBytes = 16 * (rounds + 1)
        withUnsafeTemporaryAllocation(byteCount: scheduleBytes + 16, alignment: 16) { scratch in
            let schedule = scratch.baseAddress!
            expandKey(key, rounds: rounds, into: schedule)
            let laidOut = schedule + scheduleBytes
            for round in 0...rounds {
                let offset = direction == .encryption ? (inputOffset + round) & 3 : round & 3
                let constant: UInt8 = round == 0 ? 0 : 0x63
                for natural in 0..<16 {
                    let byte = schedule.load(fromByteOffset: 16 * round + natural, as: UInt8.self)
                    laidOut.storeBytes(
                        of: byte ^ constant, toByteOffset: storedPosition(ofNatural: natural, offset: offset),
                        as: UInt8.self)
                }
                broadcastPlanes(of: UnsafeRawPointer(laidOut), into: planes + 8 * round)
            }
            secureZero(schedule, count: scratch.count)
        }
    }

    deinit {
        secureZero(UnsafeMutableRawPointer(planes), count: planeCount * MemoryLayout<Plane>.stride)
        planes.deallocate()
    }
}

/// Writes the eight planes of one 16-byte round key: plane b's byte p is 0xff if bit b of byte p is set.
private func broadcastPlanes(of key: UnsafeRawPointer, into planes: UnsafeMutablePointer<Plane>) {
    let bytes = SIMD16<UInt8>(
        key.load(fromByteOffset: 0, as: UInt8.self), key.load(fromByteOffset: 1, as: UInt8.self),
        key.load(fromByteOffset: 2, as: UInt8.self), key.load(fromByteOffset: 3, as: UInt8.self),
        key.load(fromByteOffset: 4, as: UInt8.self), key.load(fromByteOffset: 5, as: UInt8.self),
        key.load(fromByteOffset: 6, as: UInt8.self), key.load(fromByteOffset: 7, as: UInt8.self),
        key.load(fromByteOffset: 8, as: UInt8.self), key.load(fromByteOffset: 9, as: UInt8.self),
        key.load(fromByteOffset: 10, as: UInt8.self), key.load(fromByteOffset: 11, as: UInt8.self),
        key.load(fromByteOffset: 12, as: UInt8.self), key.load(fromByteOffset: 13, as: UInt8.self),
        key.load(fromByteOffset: 14, as: UInt8.self), key.load(fromByteOffset: 15, as: UInt8.self))
    let one = SIMD16<UInt8>(repeating: 1)
    for bit in 0..<8 {
        // (bytes >> bit) & 1 is 0 or 1 per byte; 0 − that is 0x00 or 0xff: no branch, no lookup.
        let mask = SIMD16<UInt8>(repeating: 0) &- ((bytes &>> UInt8(bit)) & one)
        planes[bit] = unsafeBitCast(mask, to: Plane.self)
    }
}

/// FIPS 197 §5.2 KeyExpansion: writes the `16 · (rounds + 1)` bytes of the round keys, in natural byte
/// order, to `schedule`.
private func expandKey(_ key: UnsafeRawBufferPointer, rounds: Int, into schedule: UnsafeMutableRawPointer) {
    let keyWords = key.count / 4
    let totalWords = 4 * (rounds + 1)
    // Words are held with their first byte in the low 8 bits (a little-endian load of the four bytes).
    let words = schedule.bindMemory(to: UInt32.self, capacity: totalWords)
    for i in 0..<keyWords {
        words[i] = UInt32(littleEndian: key.baseAddress!.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self))
    }
    var roundConstant: UInt32 = 1
    for i in keyWords..<totalWords {
        var temp = words[i - 1]
        if i % keyWords == 0 {
            // RotWord moves byte 0 to the end: with byte 0 in the low bits that is a rotate right by 8.
            temp = subWord((temp >> 8) | (temp << 24)) ^ roundConstant
            // xtime on the (public) round constant.
            roundConstant = ((roundConstant << 1) ^ ((roundConstant >> 7) * 0x1b)) & 0xff
        } else if keyWords > 6 && i % keyWords == 4 {
            temp = subWord(temp)
        }
        words[i] = words[i - keyWords] ^ temp
    }
    // Stored little-endian so the bytes are in natural order in memory on any host.
    for i in 0..<totalWords { words[i] = words[i].littleEndian }
}

/// SubWord: the AES S-box on each byte of `word`, in constant time.
private func subWord(_ word: UInt32) -> UInt32 {
    let w = UInt64(word)
    var p0 = gatherPlane(w, bit: 0), p1 = gatherPlane(w, bit: 1)
    var p2 = gatherPlane(w, bit: 2), p3 = gatherPlane(w, bit: 3)
    var p4 = gatherPlane(w, bit: 4), p5 = gatherPlane(w, bit: 5)
    var p6 = gatherPlane(w, bit: 6), p7 = gatherPlane(w, bit: 7)
    AESSBoxCircuit.forward(&p0, &p1, &p2, &p3, &p4, &p5, &p6, &p7)
    let spread = scatterPlane(p0, bit: 0) | scatterPlane(p1, bit: 1) | scatterPlane(p2, bit: 2)
        | scatterPlane(p3, bit: 3) | scatterPlane(p4, bit: 4) | scatterPlane(p5, bit: 5)
        | scatterPlane(p6, bit: 6) | scatterPlane(p7, bit: 7)
    // The circuit leaves out the S-box's constant 0x63; add it back to each byte.
    return UInt32(truncatingIfNeeded: spread) ^ 0x6363_6363
}

/// Bit `bit` of each of the four bytes of `word`, packed into bits 0 … 3.
///
/// After masking, the set bits sit at 8i (i = 0 … 3). Multiplying by 2^24 + 2^17 + 2^10 + 2^3 moves bit
/// 8i to 8i + 24 − 7j for each j; the exponent is 24 + i exactly when j = i, and no two (i, j) pairs give
/// the same exponent, so there are no carries and bits 24 … 27 hold the four bits in order.
@inline(__always)
private func gatherPlane(_ word: UInt64, bit: UInt64) -> UInt64 {
    (((word >> bit) & 0x0101_0101) &* 0x0102_0408) >> 24 & 0xf
}

/// The inverse of `gatherPlane`: bits 0 … 3 of `plane` become bit `bit` of bytes 0 … 3.
///
/// Multiplying by 2^0 + 2^7 + 2^14 + 2^21 copies bit i to i + 7j; the copy with j = i lands on 8i, and the
/// mask keeps only those.
@inline(__always)
private func scatterPlane(_ plane: UInt64, bit: UInt64) -> UInt64 {
    (((plane & 0xf) &* 0x0020_4081) & 0x0101_0101) << bit
}
