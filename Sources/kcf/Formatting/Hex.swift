/// Hexadecimal text for bytes.
enum Hex {
    /// `bytes` as lowercase hexadecimal, two digits a byte.
    static func lower(_ bytes: some Sequence<UInt8>) -> String {
        var text = ""
        for byte in bytes {
            text += byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
        }
        return text
    }

    /// `bytes` as uppercase hexadecimal, two digits a byte (as `security` prints hashes and blobs).
    static func upper(_ bytes: some Sequence<UInt8>) -> String {
        lower(bytes).uppercased()
    }
}
