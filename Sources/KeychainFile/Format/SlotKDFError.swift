/// Why a slot's KDF id or parameters were refused, in words; the header parser adds the offset.
struct SlotKDFError: Error, Equatable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
