// Completing AES-GCM tags whose associated data had 16 bytes left at zero when the box was sealed.
//
// Why. A keychain file chains its boxes: each box's associated data holds the tag of the box before it, so
// sealing them one after another is inherently serial. GHASH is linear in its input blocks, though:
//
//     GHASH_H(X_0 … X_{n−1}) = X_0·H^n ⊕ X_1·H^{n−1} ⊕ … ⊕ X_{n−1}·H
//
// so a box sealed with the slot of its associated data at zero differs from the box sealed with slot bytes S
// only in the tag, by S's blocks times the powers of H at their positions. The ciphertext does not depend on
// the associated data at all. Many boxes can therefore be sealed in parallel with their slots at zero and
// their tags completed afterwards in file order, two field multiplications each.
//
// With the slot at byte offset s of the associated data (r = s mod 16, b = s / 16) and n GHASH blocks in all
// (associated data and ciphertext each padded to whole blocks, and the length block):
//
//     r = 0:  tag ⊕= S · H^(n−b)
//     r > 0:  tag ⊕= (0^r ‖ S[0 ..< 16−r]) · H^(n−b) ⊕ (S[16−r ..< 16] ‖ 0^r) · H^(n−b−1)
//
// The exponents depend only on the lengths, which are public; the multiplications are GHASH's own constant-
// time ones. The slot bytes themselves are public in the keychain's use (the previous box's tag, written to
// the file), but nothing here depends on that.

extension AES.GCM {
    /// Completes the tags of boxes that were sealed with a 16-byte slot of their associated data at zero, once
    /// the slot's bytes are known, so that each box becomes exactly the box sealed with those bytes in place.
    ///
    /// The ciphertext of an AES-GCM box does not depend on its associated data and its tag depends on it
    /// linearly, so the expensive part of sealing can be done before the slot is known (for example in
    /// parallel, for boxes whose associated data holds the tag of the box before them), and the tag corrected
    /// afterwards at the cost of two field multiplications.
    ///
    /// An instance keeps powers of the key's GHASH subkey for the message lengths it has seen (at most
    /// ``cachedPowerLimit`` of them) and zeroes them when released. It is not safe to use from several threads
    /// at once.
    ///
    /// ```swift
    /// var aad = header + [UInt8](repeating: 0, count: 16)   // the slot at offset header.count, still zero
    /// var box = [UInt8](repeating: 0, count: plaintext.count + 28)
    /// try AES.GCM.seal(plaintext, using: key, nonce: nonce, authenticating: aad, into: box)   // buffers
    /// let slot = try AES.GCM.DeferredSlot(key: key, slotOffset: header.count, authenticatedByteCount: aad.count)
    /// try slot.complete(tagOf: box, slot: previousTag)
    /// // box is now what sealing with `header + previousTag` as associated data gives.
    /// ```
    @_spi(KeychainFileInternals)
    public final class DeferredSlot {
        /// The most distinct powers of H kept; others are computed for each call.
        public static let cachedPowerLimit = 32

        private let slotOffset: Int
        private let authenticatedByteCount: Int
        /// The key's prepared context, which holds H (and wipes it when released): H is read from it when a power
        /// is computed rather than copied into this object.
        private let context: AESGCMContext
        /// Cached powers: `cachedExponents[i]` is the exponent of `cachedPowers[i]` (the first `cachedCount`).
        private var cachedExponents: [Int] = []
        private let cachedPowers: UnsafeMutablePointer<GHASHMultiplier>
        private var cachedCount = 0

        /// Prepares to complete boxes sealed under `key` with `authenticatedByteCount` bytes of associated data
        /// whose bytes `slotOffset ..< slotOffset + 16` were zero.
        ///
        /// - Throws: `CryptoKitError.invalidParameter` if the slot does not lie within the associated data;
        ///   `.incorrectKeySize` for a key that is not 16, 24 or 32 bytes.
        public init(key: SymmetricKey, slotOffset: Int, authenticatedByteCount: Int) throws(CryptoKitError) {
            guard slotOffset >= 0, authenticatedByteCount >= 16, slotOffset <= authenticatedByteCount - 16 else {
                throw .invalidParameter
            }
            context = try key.storage.gcmContext()
            self.slotOffset = slotOffset
            self.authenticatedByteCount = authenticatedByteCount
            cachedPowers = .allocate(capacity: Self.cachedPowerLimit)
        }

        deinit {
            if cachedCount > 0 {
                secureZero(UnsafeMutableRawPointer(cachedPowers), count: cachedCount * MemoryLayout<GHASHMultiplier>.stride)
            }
            cachedPowers.deinitialize(count: cachedCount)
            cachedPowers.deallocate()
        }

        /// Adds to the tag of `box` (nonce ‖ ciphertext ‖ tag, sealed with the slot at zero) the difference
        /// that the 16 bytes at `slot` in the slot make.
        ///
        /// - Throws: `CryptoKitError.incorrectParameterSize` for a box shorter than 28 bytes or a slot that is
        ///   not 16 bytes.
        public func complete(tagOf box: UnsafeMutableRawBufferPointer, slot: UnsafeRawBufferPointer) throws(CryptoKitError) {
            guard box.count >= AES.GCM.boxOverhead, slot.count == 16, let base = box.baseAddress, let value = slot.baseAddress else {
                throw .incorrectParameterSize
            }
            let ciphertextCount = box.count - AES.GCM.boxOverhead
            let blockCount = (authenticatedByteCount + 15) / 16 + (ciphertextCount + 15) / 16 + 1
            let firstBlock = slotOffset / 16
            let shift = slotOffset % 16
            let slotHigh = value.loadBigEndianUInt64(at: 0)
            let slotLow = value.loadBigEndianUInt64(at: 8)
            var product = GHASHProduct()
            if shift == 0 {
                product.accumulate(high: slotHigh, low: slotLow, power(blockCount - firstBlock))
            } else {
                // The slot as a 128-bit big-endian number, shifted right by `shift` bytes into the first block
                // and left by 16 − `shift` bytes into the second.
                let (firstHigh, firstLow) = shiftedRight(slotHigh, slotLow, byBits: 8 * shift)
                let (secondHigh, secondLow) = shiftedLeft(slotHigh, slotLow, byBits: 8 * (16 - shift))
                product.accumulate(high: firstHigh, low: firstLow, power(blockCount - firstBlock))
                product.accumulate(high: secondHigh, low: secondLow, power(blockCount - firstBlock - 1))
            }
            let (high, low) = product.reduced()
            let tag = base + box.count - AES.GCM.tagByteCount
            tag.storeBigEndian(UnsafeRawPointer(tag).loadBigEndianUInt64(at: 0) ^ high, at: 0)
            tag.storeBigEndian(UnsafeRawPointer(tag).loadBigEndianUInt64(at: 8) ^ low, at: 8)
        }

        /// H^exponent (exponent ≥ 1) as a multiplier, from the cache or computed (and cached while there is room).
        private func power(_ exponent: Int) -> GHASHMultiplier {
            if let index = cachedExponents.firstIndex(of: exponent) { return cachedPowers[index] }
            let (high, low) = context.ghashKey.power(exponent)
            let multiplier = GHASHMultiplier(high: high, low: low)
            if cachedCount < Self.cachedPowerLimit {
                (cachedPowers + cachedCount).initialize(to: multiplier)
                cachedExponents.append(exponent)
                cachedCount += 1
            }
            return multiplier
        }

        private func shiftedRight(_ high: UInt64, _ low: UInt64, byBits bits: Int) -> (UInt64, UInt64) {
            // 0 < bits < 128, a multiple of 8.
            bits >= 64 ? (0, high >> (bits - 64)) : (high >> bits, (low >> bits) | (high << (64 - bits)))
        }

        private func shiftedLeft(_ high: UInt64, _ low: UInt64, byBits bits: Int) -> (UInt64, UInt64) {
            bits >= 64 ? (low << (bits - 64), 0) : ((high << bits) | (low >> (64 - bits)), low << bits)
        }
    }
}
