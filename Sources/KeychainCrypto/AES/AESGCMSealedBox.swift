extension AES.GCM {
    /// The output of sealing: nonce, ciphertext and tag, held as one buffer (nonce ‖ ciphertext ‖ tag).
    ///
    /// For example:
    /// ```swift
    /// let box = try AES.GCM.seal(message, using: key)
    /// let bytes = box.combined!                     // store or send these
    /// let again = try AES.GCM.SealedBox(combined: bytes)
    /// ```
    public struct SealedBox: Sendable, Hashable {
        let combinedBytes: [UInt8]

        /// Wraps a buffer already known to hold at least a nonce and a tag.
        @usableFromInline
        init(validatedCombined: [UInt8]) {
            combinedBytes = validatedCombined
        }

        /// Reads a sealed box from its combined representation, nonce ‖ ciphertext ‖ tag.
        ///
        /// - Parameter combined: At least 28 bytes: a 12-byte nonce, the ciphertext and a 16-byte tag.
        /// - Throws: ``CryptoKitError/incorrectParameterSize`` if there are fewer than 28 bytes.
        public init<Bytes: Sequence>(combined: Bytes) throws(CryptoKitError) where Bytes.Element == UInt8 {
            let bytes = Array(combined)
            guard bytes.count >= AES.GCM.nonceByteCount + AES.GCM.tagByteCount else { throw .incorrectParameterSize }
            combinedBytes = bytes
        }

        /// Assembles a sealed box from its parts.
        ///
        /// - Parameters:
        ///   - nonce: The nonce the message was sealed with.
        ///   - ciphertext: The ciphertext.
        ///   - tag: The 16-byte authentication tag.
        /// - Throws: ``CryptoKitError/incorrectParameterSize`` unless `tag` holds 16 bytes.
        public init<Ciphertext: Sequence, Tag: Sequence>(
            nonce: AES.GCM.Nonce, ciphertext: Ciphertext, tag: Tag
        ) throws(CryptoKitError) where Ciphertext.Element == UInt8, Tag.Element == UInt8 {
            let tagBytes = Array(tag)
            guard tagBytes.count == AES.GCM.tagByteCount else { throw .incorrectParameterSize }
            var bytes = Array(nonce)
            bytes.append(contentsOf: ciphertext)
            bytes.append(contentsOf: tagBytes)
            combinedBytes = bytes
        }

        /// The nonce.
        public var nonce: AES.GCM.Nonce {
            // The first 12 bytes always exist: every initialiser checks the length.
            combinedBytes.withUnsafeBytes { AES.GCM.Nonce(copying: $0.baseAddress!) }
        }

        /// The encrypted message.
        public var ciphertext: [UInt8] {
            Array(combinedBytes[AES.GCM.nonceByteCount..<(combinedBytes.count - AES.GCM.tagByteCount)])
        }

        /// The 16-byte authentication tag.
        public var tag: [UInt8] {
            Array(combinedBytes[(combinedBytes.count - AES.GCM.tagByteCount)...])
        }

        /// The combined representation, nonce ‖ ciphertext ‖ tag. Optional, as in CryptoKit (where other
        /// nonce sizes have none); with 96-bit nonces it is never `nil`.
        public var combined: [UInt8]? {
            combinedBytes
        }
    }
}
