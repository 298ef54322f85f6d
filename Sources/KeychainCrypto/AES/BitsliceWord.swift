/// Words that hold one bit plane of several bitsliced AES states. Only bitwise operations are used, so every
/// function over them runs in time independent of the data.
@usableFromInline
internal protocol BitsliceWord: Sendable {
    static func ^ (lhs: Self, rhs: Self) -> Self
    static func & (lhs: Self, rhs: Self) -> Self
    static func | (lhs: Self, rhs: Self) -> Self
    static prefix func ~ (x: Self) -> Self
    static var zero: Self { get }
}

// `zero` and the operators come from the standard library (AdditiveArithmetic, FixedWidthInteger), and for
// SIMD2<UInt64> from AESPlanes.swift, which implements them with whole-register instructions.
