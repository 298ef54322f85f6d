import KeychainFile

/// `kcf-bench reed-solomon`: RS(255,223) — 32 parity symbols, the code format v2's healing parity is
/// planned around — encoding a large buffer the way compaction will, and decoding codewords that hold a
/// few errors. Rates count data bytes (223 per full codeword). Each figure is the best of its trials.
func runReedSolomonBenchmark(seconds: Double, megabytes: Int, json: Bool) throws {
    var report = Report(title: "kcf-bench reed-solomon", machine: machineDescription())
    let code = try ReedSolomonCode(paritySymbols: 32)
    let k = code.maximumDataLength, n = code.paritySymbols
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func nextRandom() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }

    // Encoding: the whole buffer, codeword after codeword, into one parity buffer; no allocation inside.
    let size = megabytes << 20
    let data = (0..<size).map { _ in UInt8(truncatingIfNeeded: nextRandom()) }
    let codewords = (size + k - 1) / k
    var parity = [UInt8](repeating: 0, count: codewords * n)
    var bestEncode = 0.0
    for _ in 0..<max(3, Int(seconds * 3)) {
        let start = monotonicNanoseconds()
        try data.withUnsafeBytes { data in
            try parity.withUnsafeMutableBytes { parity in
                for index in 0..<codewords {
                    let from = index * k
                    try code.parity(
                        of: UnsafeRawBufferPointer(rebasing: data[from..<min(from + k, size)]),
                        into: UnsafeMutableRawBufferPointer(rebasing: parity[(index * n)..<(index * n + n)]))
                }
            }
        }
        bestEncode = max(bestEncode, Double(size) / (Double(monotonicNanoseconds() - start) / 1e9))
    }
    blackHole(parity)
    report.add("RS(255,223) encode \(megabytes) MiB", bestEncode / 1e6, "MB/s")

    // Decoding: a pool of full codewords with e errors each at random positions, repaired one by one
    // from a scratch copy; each repair is checked against the original once, outside the timing.
    let poolSize = 2_048
    let originals: [[UInt8]] = (0..<poolSize).map { index in
        let message = Array(data[(index * k)..<(index * k + k)])
        return message + (try! code.parity(of: message))
    }
    for errors in [0, 1, 4, 16] {
        let damaged: [[UInt8]] = originals.map { original in
            var word = original
            var positions = Set<Int>()
            while positions.count < errors { positions.insert(Int(nextRandom() % 255)) }
            for position in positions { word[position] ^= UInt8(truncatingIfNeeded: nextRandom() % 255 + 1) }
            return word
        }
        var scratch = [UInt8](repeating: 0, count: 255)
        for index in 0..<poolSize {
            scratch = damaged[index]
            try code.correct(codeword: &scratch)
            guard scratch == originals[index] else { fail("RS decode produced a wrong codeword") }
        }
        var best = 0.0
        for _ in 0..<max(3, Int(seconds * 3)) {
            let start = monotonicNanoseconds()
            var repaired = 0
            for index in 0..<poolSize {
                scratch.withUnsafeMutableBytes { target in
                    damaged[index].withUnsafeBytes { target.copyMemory(from: $0) }
                }
                repaired += try code.correct(codeword: &scratch).count
            }
            blackHole(repaired)
            best = max(best, Double(poolSize * k) / (Double(monotonicNanoseconds() - start) / 1e9))
        }
        let label = errors == 0 ? "RS(255,223) check, no errors" : "RS(255,223) decode, \(errors) error\(errors == 1 ? "" : "s")/codeword"
        report.add(label, best / 1e6, "MB/s")
        report.add(label, best / Double(k), "codewords/s")
    }
    report.print(json: json)
}
