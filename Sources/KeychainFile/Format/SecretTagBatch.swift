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
    ///   - aad: The associated data of the box at an index.
    ///   - key: The record key.
    static func firstFailing(
        count: Int, in bytes: [UInt8], box: (Int) -> Range<Int>, aad: (Int) -> [UInt8], key: AES.GCM.PreparedKey
    ) -> Int? {
        // The associated data side by side in one scratch block, so that every pointer outlives the call.
        let aads = (0..<count).map(aad)
        let aadByteCount = aads.reduce(0) { $0 + $1.count }
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: count + 1) { starts in
            withUnsafeTemporaryAllocation(byteCount: max(aadByteCount, 1), alignment: 8) { packed in
                starts[0] = 0
                for position in 0..<count {
                    let start = starts[position]
                    aads[position].withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: packed[start...]).copyMemory(from: $0) }
                    starts[position + 1] = start + aads[position].count
                }
                let associated = UnsafeRawBufferPointer(packed)
                return bytes.withUnsafeBytes { all in
                    AES.GCM.firstFailingTag(
                        count: count, using: key,
                        box: { UnsafeRawBufferPointer(rebasing: all[box($0)]) },
                        authenticating: { UnsafeRawBufferPointer(rebasing: associated[starts[$0]..<starts[$0 + 1]]) })
                }
            }
        }
    }
}
