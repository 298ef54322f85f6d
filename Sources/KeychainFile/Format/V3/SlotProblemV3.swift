/// Why part of a version 3 key slot was refused, in words; the header parser adds where.
struct SlotProblemV3: Error, Equatable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
