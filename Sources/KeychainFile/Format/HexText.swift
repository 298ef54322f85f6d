/// Bytes written as lowercase hexadecimal, two digits each: how ids and digests appear in messages and output.
enum HexText {
    static func lowercase<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
