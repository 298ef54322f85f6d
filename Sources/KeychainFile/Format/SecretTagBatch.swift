@_spi(KeychainFileInternals) import KeychainCrypto

/// Checks the tags of up to eight secret boxes that lie in one buffer in a single call of
/// ``AES/GCM/firstFailingTag(count:using:box:authenticating:)``, which computes their E(J0) blocks in one run of
/// the batch cipher: what opening a file does with its puts' secret boxes (``WindowedRecordDecoder``) and a
/// rewrite with the boxes it reads back from the new file (``RecordLog/WrittenSecrets``).
enum SecretTagBatch {
    /// The most boxes one check takes.
    static let limit = AES.GCM.tagBatchLimit

    /// Returns the index of the first of `count` (1 … ``limit``) boxes whose tag does not verify, or `nil` when
    /// all do.
    ///
    /// - Parameters:
    ///   - count: How many boxes.
    ///   - bytes: The buffer the boxes lie in.
    ///   - box: Where the box at an index (nonce ‖ ciphertext ‖ tag) is in `bytes`.
    ///   - writeAAD: Writes the associated data of the box at an index into the ``BoxAAD/size`` bytes given.
    ///   - key: The record key.
    static func firstFailing(
        count: Int, in bytes: [UInt8], box: (Int) -> Range<Int>, writeAAD: (Int, UnsafeMutableRawBufferPointer) -> Void,
        key: AES.GCM.PreparedKey
    ) -> Int? {
        precondition(count >= 1 && count <= limit, "1 … 8 boxes")
        // Every box's associated data is 78 bytes (its previous chain value is a 16-byte tag): they are written
        // side by side into one scratch block, so that every pointer outlives the call.
        let size = BoxAAD.size
        return withUnsafeTemporaryAllocation(byteCount: size * count, alignment: 8) { packed in
            for position in 0..<count {
                writeAAD(position, UnsafeMutableRawBufferPointer(rebasing: packed[(size * position)..<(size * (position + 1))]))
            }
            let all = UnsafeRawBufferPointer(packed)
            return bytes.withUnsafeBytes { window in
                AES.GCM.firstFailingTag(
                    count: count, using: key,
                    box: { UnsafeRawBufferPointer(rebasing: window[box($0)]) },
                    authenticating: { UnsafeRawBufferPointer(rebasing: all[(size * $0)..<(size * ($0 + 1))]) })
            }
        }
    }
}
