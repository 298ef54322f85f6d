// The GHASH state after the first whole blocks of associated data that many messages under one key share, so
// that each message's GHASH starts there instead of absorbing those blocks again.
//
// GHASH absorbs the associated data block by block from a zero state: Y ← (Y ⊕ X)·H. When the first k blocks
// of two messages' associated data are equal, so is Y after them; a message whose associated data begins with
// the prefix's bytes can start from the stored Y and absorb only the rest. Its tag is bit for bit the one
// computed from the start, since the length block still counts the whole associated data.
//
// The stored state is key material. It is X₁·Hᵏ ⊕ … ⊕ Xₖ·H for public blocks X, a polynomial in H of degree k
// whose roots an attacker could find: knowing it is as good as knowing H, which forges tags. It is kept in
// memory of its own and zeroed when the prefix goes, like the GHASH key it derives from.

/// The GHASH state after `bytes`, whole blocks of associated data, under one context's hash key.
///
/// `@unchecked Sendable`: every stored property is written in `init` and only read afterwards.
final class AESGCMAssociatedDataPrefix: @unchecked Sendable {
    /// The context whose hash key the state was computed with: another context's messages ignore the prefix.
    let context: AESGCMContext
    /// The prefix: public associated data, a whole number of 16-byte blocks, at least one.
    private let bytes: [UInt8]
    private let state: GHASHStateStorage
    /// Associated data of one layout that many of the messages have whole, varying only in public bytes: the
    /// state after all of it (AESGCMPublicFields.swift).
    private let template: AESGCMAssociatedDataTemplate?

    /// Absorbs the whole 16-byte blocks at the start of `prefix` (at least one) under `context`'s hash key; with
    /// `template`, messages whose associated data matches it start after the whole of it instead.
    init(context: AESGCMContext, prefix: UnsafeRawBufferPointer, template: AESGCMAssociatedDataTemplate? = nil) {
        let blockCount = prefix.count / 16
        precondition(blockCount > 0, "a prefix is at least one whole block")
        precondition(template == nil || template!.tables.context === context, "a template under the prefix's key")
        self.context = context
        self.template = template
        bytes = Array(UnsafeRawBufferPointer(rebasing: prefix[..<(16 * blockCount)]))
        state = GHASHStateStorage(absorbing: prefix.baseAddress!, blockCount: blockCount, key: context.ghashKey)
    }

    /// The GHASH state to absorb `aad` from and how many of its bytes that state has absorbed already: the state
    /// after all of `aad` when it matches the template; the stored state and the prefix's length when `aad`
    /// begins with the prefix; a zero state and 0 otherwise, or when `context` is not the one the states were
    /// computed under.
    @inline(__always)
    func start(for aad: UnsafeRawBufferPointer, under context: AESGCMContext) -> (hash: GHASH, absorbed: Int) {
        if let template, let whole = template.state(after: aad, under: context) { return (whole, aad.count) }
        guard context === self.context, aad.count >= bytes.count, let base = aad.baseAddress else { return (GHASH(), 0) }
        // The associated data is public: an ordinary comparison is fine here.
        let matches = bytes.withUnsafeBytes { prefix in
            var difference: UInt64 = 0
            var offset = 0
            while offset < prefix.count {
                difference |= prefix.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                    ^ base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            return difference == 0
        }
        return matches ? (state.value, bytes.count) : (GHASH(), 0)
    }
}

extension AESGCMContext {
    /// The most bytes of padded associated data, ciphertext and lengths block that
    /// ``authenticationHash(aad:prefix:ciphertext:)`` lays out in scratch memory.
    static let contiguousHashLimit = 512

    /// GHASH over `aad` and `ciphertext`, each zero-padded to a whole block, and the lengths block: the value
    /// whose XOR with E(J0) is the tag. Starts from `prefix`'s state when `aad` begins with it.
    ///
    /// A short message (most boxes: a few hundred bytes) is laid out as one run of blocks in scratch memory, so
    /// that GHASH absorbs it four blocks at a time across the boundaries of its three parts, one reduction a
    /// group, rather than each part on its own with a reduction for each of its last blocks. Every input is
    /// public (associated data, ciphertext, lengths): the copy holds nothing secret.
    func authenticationHash(
        aad: UnsafeRawBufferPointer, prefix: AESGCMAssociatedDataPrefix?, ciphertext: UnsafeRawBufferPointer
    ) -> GHASH {
        let key = ghashKey
        var (hash, absorbed) = aad.baseAddress == nil ? (GHASH(), 0) : prefix?.start(for: aad, under: self) ?? (GHASH(), 0)
        let aadRest = aad.count - absorbed
        let aadPadded = (aadRest + 15) & ~15
        let textPadded = (ciphertext.count + 15) & ~15
        let total = aadPadded + textPadded + 16
        guard total <= Self.contiguousHashLimit else {
            if let aadBase = aad.baseAddress { hash.update(bytes: aadBase + absorbed, count: aadRest, key: key) }
            if let input = ciphertext.baseAddress { hash.update(bytes: input, count: ciphertext.count, key: key) }
            hash.updateLengths(authenticatedByteCount: aad.count, ciphertextByteCount: ciphertext.count, key: key)
            return hash
        }
        withUnsafeTemporaryAllocation(byteCount: Self.contiguousHashLimit, alignment: 16) { scratch in
            let blocks = scratch.baseAddress!
            blocks.initializeMemory(as: UInt8.self, repeating: 0, count: total)
            if let aadBase = aad.baseAddress, aadRest > 0 { blocks.copyMemory(from: aadBase + absorbed, byteCount: aadRest) }
            if let input = ciphertext.baseAddress, ciphertext.count > 0 {
                (blocks + aadPadded).copyMemory(from: input, byteCount: ciphertext.count)
            }
            (blocks + aadPadded + textPadded).storeBigEndian(UInt64(aad.count) &* 8, at: 0)
            (blocks + aadPadded + textPadded).storeBigEndian(UInt64(ciphertext.count) &* 8, at: 8)
            hash.update(blocks: UnsafeRawPointer(blocks), count: total / 16, key: key)
        }
        return hash
    }

    /// GHASH after absorbing `aad` (zero-padded to a whole block), started from `prefix`'s state when `aad`
    /// begins with it.
    @inline(__always)
    func hashAssociatedData(_ aad: UnsafeRawBufferPointer, prefix: AESGCMAssociatedDataPrefix?) -> GHASH {
        guard let aadBase = aad.baseAddress else { return GHASH() }
        var (hash, absorbed) = prefix?.start(for: aad, under: self) ?? (GHASH(), 0)
        hash.update(bytes: aadBase + absorbed, count: aad.count - absorbed, key: ghashKey)
        return hash
    }
}
