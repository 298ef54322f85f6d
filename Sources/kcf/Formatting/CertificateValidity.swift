/// The validity dates of an X.509 certificate (RFC 5280 §4.1.2.5), as ISO 8601 text in UTC.
struct CertificateValidity {
    /// The first moment the certificate is valid, such as `2026-01-01T00:00:00Z`.
    let notBefore: String
    /// The last moment it is valid.
    let notAfter: String

    /// The dates of a DER certificate, or `nil` when it is not one or a date is not a UTCTime or
    /// GeneralizedTime of the form RFC 5280 requires (`YYMMDDHHMMSSZ`, `YYYYMMDDHHMMSSZ`).
    init?(certificateDER der: [UInt8]) {
        guard let certificate = try? DER.single(der), certificate.tag == 0x30, let parts = try? certificate.children(),
              let tbs = parts.first, tbs.tag == 0x30, var fields = try? tbs.children() else { return nil }
        if fields.first?.tag == 0xA0 { fields.removeFirst() }   // [0] EXPLICIT version, absent in v1
        // serialNumber, signature, issuer, validity.
        guard fields.count >= 4, fields[3].tag == 0x30, let times = try? fields[3].children(), times.count == 2,
              let notBefore = Self.iso8601(times[0]), let notAfter = Self.iso8601(times[1]) else { return nil }
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// A UTCTime (years 1950 … 2049, RFC 5280) or GeneralizedTime as `YYYY-MM-DDThh:mm:ssZ`.
    private static func iso8601(_ time: DER.Element) -> String? {
        let digits: [UInt8]
        var year: Int
        switch (time.tag, time.content.count) {
        case (0x17, 13):
            digits = Array(time.content.dropLast())
            guard let yy = number(digits[0..<2]) else { return nil }
            year = yy < 50 ? 2000 + yy : 1900 + yy
        case (0x18, 15):
            digits = Array(time.content.dropLast().dropFirst(2))
            guard let yyyy = number(time.content[0..<4]) else { return nil }
            year = yyyy
        default:
            return nil
        }
        guard time.content.last == UInt8(ascii: "Z"), let month = number(digits[2..<4]), let day = number(digits[4..<6]),
              let hour = number(digits[6..<8]), let minute = number(digits[8..<10]), let second = number(digits[10..<12]),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(year)
        return String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText
            + "-\(two(month))-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))Z"
    }

    /// The decimal number of ASCII digits, or `nil` when a byte is not a digit.
    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in bytes {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }
}
