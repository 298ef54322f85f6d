import KeychainCrypto

/// The inner header at the start of a KDBX 4 payload: the inner random stream that hides protected values,
/// its key, and the binaries (attachments), each as an id byte, a 4-byte size and data, ended by id 0.
struct KDBXInnerHeader {
    /// The inner random stream's algorithm id (3 is ChaCha20).
    let streamID: UInt32
    /// Its key.
    let streamKey: [UInt8]
    /// How many binaries the pool holds.
    let binaryCount: Int

    init(_ reader: inout KDBXByteReader) throws(KDBXError) {
        var streamID: UInt32?
        var streamKey: [UInt8]?
        var binaries = 0
        while true {
            let id = try reader.uint8("an inner header field's id")
            let size = Int(try reader.uint32("an inner header field's size"))
            let data = try reader.take(size, "inner header field \(id)")
            switch id {
            case 0:
                guard let streamID, let streamKey else { throw .damaged("the inner header lacks its stream id or key") }
                self.streamID = streamID
                self.streamKey = streamKey
                binaryCount = binaries
                return
            case 1:
                guard data.count == 4, streamID == nil else { throw .damaged("the inner header's stream id is malformed or given twice") }
                streamID = UInt32(KDBXByteReader.littleEndian(data))
            case 2:
                guard streamKey == nil else { throw .damaged("the inner header gives its stream key twice") }
                streamKey = data
            case 3:
                guard !data.isEmpty else { throw .damaged("an attachment in the inner header has no flags byte") }
                binaries += 1
            default:
                throw .damaged("the inner header has the unknown field \(id)")
            }
        }
    }

    /// The inner stream: ChaCha20 with key and nonce from SHA-512 of the stream key (bytes 0–31 and 32–43).
    ///
    /// - Throws: ``KDBXError/unsupportedAlgorithm(_:)`` for Salsa20 (KDBX 3's) or another id.
    func stream() throws(KDBXError) -> ChaCha20 {
        switch streamID {
        case 3:
            let hash = Array(SHA512.hash(data: streamKey))
            do throws(CryptoKitError) {
                return try ChaCha20(key: hash[0..<32], nonce: hash[32..<44])
            } catch {
                throw .damaged("the inner stream's key is unusable")
            }
        case 2: throw .unsupportedAlgorithm("the inner random stream Salsa20 (KDBX 3's; save the file again with KeePass 2.35 or later)")
        default: throw .unsupportedAlgorithm("the inner random stream \(streamID)")
        }
    }
}
