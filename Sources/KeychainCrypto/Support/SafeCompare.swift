// Constant-time comparison. Tags, MACs, digests and keys are compared by OR-ing the XOR of every byte pair
// and testing the accumulated value once at the end, so the time taken depends only on the lengths,
// never on where the first difference is. Lengths are not secret (a tag's length is public), so a length
// mismatch returns at once.

/// Returns whether two buffers hold the same bytes, in time that depends only on their lengths.
@usableFromInline
func constantTimeEquals(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for index in 0..<lhs.count {
        difference |= lhs[index] ^ rhs[index]
    }
    return constantTimeIsZero(difference)
}

/// Returns `value == 0` without a data-dependent branch inside the computation: the difference byte is
/// widened and its borrow folded into one bit before the single final comparison of a public result.
@inline(__always)
func constantTimeIsZero(_ value: UInt8) -> Bool {
    // (x - 1) >> 63 is 1 exactly when x == 0 for 0 <= x < 2^63.
    let widened = UInt64(value)
    return ((widened &- 1) >> 63) == 1
}
