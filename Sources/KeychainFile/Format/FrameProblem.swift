/// Why a frame failed: the offset (in the file) and a reason. A structural or authentication failure of
/// the final frame is a torn tail or damage, as SPEC.md §9.3 decides; a semantic one (an authentic record
/// that makes no sense) is always corruption (SPEC.md §9.2 steps 4–5).
struct FrameProblem: Error {
    let offset: Int
    let reason: String
    var isSemantic = false
    /// The file's error, when reading the frame failed (not a problem of the frame: rethrown as it is).
    var ioError: KeychainError? = nil
}
