import Foundation
import KeychainCrypto

/// Opens a KDBX 4 file (4.0 and 4.1) with its password: checks the header's SHA-256 and HMAC, the HMAC of
/// every payload block, decrypts (AES-256-CBC or ChaCha20), inflates (gzip), reads the inner header and the XML,
/// and reveals the protected values with the inner stream (ChaCha20; Salsa20 is refused).
///
/// Nothing is returned unless every check passed: a damaged or altered file is an error, never a partial
/// database.
enum KDBXReader {
    /// The largest payload, decrypted or inflated, kcf reads.
    static let maximumPayloadByteCount = 256 << 20

    /// The XML document of the file, its protected values revealed, and its binaries (attachments) by index.
    struct Contents {
        let minorVersion: UInt16
        let document: XMLTreeElement
        let binaryCount: Int
    }

    /// Reads `bytes` with `password`.
    ///
    /// - Parameters:
    ///   - bytes: The whole file.
    ///   - password: The database's password; `nil` for none (a key file alone).
    ///   - keyFileKey: The 32-byte key of a key file, if the database has one.
    /// - Throws: ``KDBXError``.
    static func read(_ bytes: [UInt8], password: String?, keyFileKey: [UInt8]? = nil) throws(KDBXError) -> Contents {
        var reader = KDBXByteReader(bytes)
        let header = try KDBXHeader(&reader)
        let storedHash = try reader.take(32, "the header's SHA-256")
        guard SHA256.hash(data: header.bytes) == storedHash else {
            throw .damaged("the header's SHA-256 does not match: the header is damaged")
        }
        let storedMAC = try reader.take(32, "the header's HMAC")
        var composite: [UInt8] = []
        if let password { composite += Array(SHA256.hash(data: Array(password.utf8))) }
        if let keyFileKey { composite += keyFileKey }
        var compositeKey = Array(SHA256.hash(data: composite))
        defer { wipe(&compositeKey) }
        var transformed = try KDBXKeyDerivation.transformedKey(compositeKey, parameters: header.kdfParameters)
        defer { wipe(&transformed) }
        var masterKey = Array(SHA256.hash(data: header.masterSeed + transformed))
        defer { wipe(&masterKey) }
        var hmacBase = Array(SHA512.hash(data: header.masterSeed + transformed + [0x01]))
        defer { wipe(&hmacBase) }
        let headerMAC = HMAC<SHA256>.authenticationCode(for: header.bytes, using: blockKey(index: UInt64.max, base: hmacBase))
        guard headerMAC == storedMAC else { throw .wrongPassword }
        var ciphertext = try blocks(&reader, hmacBase: hmacBase)
        defer { wipe(&ciphertext) }
        var plaintext = try decrypt(ciphertext, header: header, key: masterKey)
        defer { wipe(&plaintext) }
        if header.compressed {
            do throws(DeflateError) {
                let inflated = try GzipReader.decompress(plaintext, maximumOutput: maximumPayloadByteCount)
                wipe(&plaintext)
                plaintext = inflated
            } catch {
                throw .damaged("the payload does not inflate: \(error)")
            }
        }
        var payload = KDBXByteReader(plaintext)
        let inner = try KDBXInnerHeader(&payload)
        var document: XMLTreeElement
        do throws(XMLParseError) {
            document = try XMLReader.parse(Array(plaintext[payload.offset...]))
        } catch {
            throw .damaged("the payload's XML cannot be read: \(error)")
        }
        var stream = try inner.stream()
        try reveal(&document, stream: &stream)
        guard document.name == "KeePassFile" else { throw .damaged("the payload's XML is <\(document.name)>, not <KeePassFile>") }
        return Contents(minorVersion: header.minorVersion, document: document, binaryCount: inner.binaryCount)
    }

    /// The HMAC-SHA256 key of block `index` (and of the header, index 2⁶⁴−1): SHA-512(index ‖ base).
    private static func blockKey(index: UInt64, base: [UInt8]) -> SymmetricKey {
        SymmetricKey(data: SHA512.hash(data: KDBXByteReader.bytes(of: index) + base))
    }

    /// The payload's ciphertext: the HMAC block stream's blocks, each checked, up to the empty last block.
    private static func blocks(_ reader: inout KDBXByteReader, hmacBase: [UInt8]) throws(KDBXError) -> [UInt8] {
        var ciphertext: [UInt8] = []
        var index: UInt64 = 0
        while true {
            let mac = try reader.take(32, "block \(index)'s HMAC")
            let size = try reader.uint32("block \(index)'s size")
            guard size <= UInt32(Int32.max) else { throw .damaged("block \(index) has a negative size") }
            guard Int(size) <= reader.remaining else {
                throw .damaged("the file ends inside block \(index) (it is \(size) bytes; \(reader.remaining) are left): the file is cut short")
            }
            guard ciphertext.count + Int(size) <= maximumPayloadByteCount else {
                throw .limitExceeded("a payload over \(maximumPayloadByteCount >> 20) MiB")
            }
            let data = try reader.take(Int(size), "block \(index)")
            let expected = HMAC<SHA256>.authenticationCode(
                for: KDBXByteReader.bytes(of: index) + KDBXByteReader.bytes(of: UInt64(size)).prefix(4) + data,
                using: blockKey(index: index, base: hmacBase))
            guard expected == mac else { throw .damaged("block \(index)'s HMAC does not match: the payload is damaged or altered") }
            if size == 0 { break }
            ciphertext += data
            index += 1
        }
        guard reader.isAtEnd else { throw .damaged("\(reader.remaining) bytes follow the payload's last block") }
        return ciphertext
    }

    private static func decrypt(_ ciphertext: [UInt8], header: KDBXHeader, key: [UInt8]) throws(KDBXError) -> [UInt8] {
        switch header.cipher {
        case .aes256:
            do throws(CryptoKitError) {
                return try AES.CBC.decrypt(ciphertext, using: SymmetricKey(data: key), iv: header.encryptionIV)
            } catch {
                throw .damaged("the payload does not decrypt (its AES-CBC padding or length is wrong)")
            }
        case .chacha20:
            do throws(CryptoKitError) {
                var cipher = try ChaCha20(key: key, nonce: header.encryptionIV)
                var plaintext = ciphertext
                try cipher.apply(to: &plaintext)
                return plaintext
            } catch {
                throw .damaged("the payload does not decrypt with ChaCha20 (\(error))")
            }
        }
    }

    /// Replaces the text of every element with `Protected="True"`, in document order, by its plaintext: the
    /// base64 value XORed with the next bytes of the inner stream.
    private static func reveal(_ element: inout XMLTreeElement, stream: inout ChaCha20) throws(KDBXError) {
        if element.attribute("Protected")?.lowercased() == "true" {
            guard let data = Data(base64Encoded: element.text) else {
                throw .damaged("a protected value (in <\(element.name)>) is not base64")
            }
            var bytes = [UInt8](data)
            do throws(CryptoKitError) {
                try stream.apply(to: &bytes)
            } catch {
                throw .damaged("the inner stream ran out")
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw .damaged("a protected value (in <\(element.name)>) is not UTF-8 once revealed")
            }
            wipe(&bytes)
            element.text = text
        }
        for index in element.children.indices { try reveal(&element.children[index], stream: &stream) }
    }
}
