import KeychainCrypto

/// `kcf-bench ct`: a dudect-style timing-leakage check (Reparaz, Balasch and Verbauwhede, "Dude, is my code
/// constant time?", 2017).
///
/// Each test times single calls of an operation on inputs from two classes, interleaved in a random order:
/// class 0 uses one fixed input, class 1 a fresh random input per call. Welch's t-statistic compares the
/// two timing distributions; |t| above 4.5 is the usual sign of a leak. As in dudect, t is also computed
/// over the measurements below several percentiles of the pooled timings, which removes interrupt and
/// scheduling outliers that only add noise; the largest |t| is the verdict.
func runLeakageCheck(callsPerClass: Int, json: Bool) throws {
    var report = Report(title: "kcf-bench ct (dudect-style, \(callsPerClass) timed calls per class)", machine: machineDescription())
    var random = SystemRandomNumberGenerator()

    // AES-256 block encryption, key schedule included: fixed key vs a random key per call.
    let fixedKey = SymmetricKey(data: [UInt8](repeating: 0, count: 32))
    let plaintext = [UInt8](repeating: 0x42, count: 16)
    let aesResult = measureLeakage(callsPerClass: callsPerClass, using: &random) { (isRandomClass, generator) in
        let key = isRandomClass ? SymmetricKey(size: .bits256, using: &generator) : fixedKey
        var block = plaintext
        return { try! AES.permute(&block, key: key) }
    }
    aesResult.add(to: &report, name: "AES-256 encrypt, fixed vs random key")

    // AES-GCM open with a wrong tag: fixed tag differing from the right one only in its last byte (the
    // slowest case for an early-exit comparison) vs a random tag per call.
    let gcmKey = SymmetricKey(size: .bits256, using: &random)
    let nonce = try AES.GCM.Nonce(data: [UInt8](repeating: 1, count: 12))
    let sealed = try AES.GCM.seal([UInt8](repeating: 0x33, count: 64), using: gcmKey, nonce: nonce)
    var nearMissTag = sealed.tag
    nearMissTag[15] ^= 0x01
    let fixedBox = try AES.GCM.SealedBox(nonce: nonce, ciphertext: sealed.ciphertext, tag: nearMissTag)
    let gcmResult = measureLeakage(callsPerClass: callsPerClass, using: &random) { (isRandomClass, generator) in
        var box = fixedBox
        if isRandomClass {
            var tag = [UInt8](repeating: 0, count: 16)
            for index in 0..<16 { tag[index] = UInt8.random(in: 0...255, using: &generator) }
            if tag == sealed.tag { tag[0] ^= 1 }  // must stay wrong (chance 2^-128)
            box = try! AES.GCM.SealedBox(nonce: nonce, ciphertext: sealed.ciphertext, tag: tag)
        }
        return {
            do {
                _ = try AES.GCM.open(box, using: gcmKey)
                fatalError("a wrong tag verified")
            } catch {}
        }
    }
    gcmResult.add(to: &report, name: "AES-256-GCM open, wrong tag: near-miss vs random")

    report.print(json: json)
}

/// Welch's t over two classes of timings, accumulated online (Welford).
struct WelchAccumulator {
    var count = [0.0, 0.0]
    var mean = [0.0, 0.0]
    var m2 = [0.0, 0.0]

    mutating func add(_ value: Double, classIndex: Int) {
        count[classIndex] += 1
        let delta = value - mean[classIndex]
        mean[classIndex] += delta / count[classIndex]
        m2[classIndex] += delta * (value - mean[classIndex])
    }

    var t: Double {
        guard count[0] > 1, count[1] > 1 else { return 0 }
        let variance0 = m2[0] / (count[0] - 1)
        let variance1 = m2[1] / (count[1] - 1)
        let denominator = (variance0 / count[0] + variance1 / count[1]).squareRoot()
        return denominator > 0 ? (mean[0] - mean[1]) / denominator : 0
    }
}

struct LeakageResult {
    var tAll: Double
    var cropped: [(percentile: Double, t: Double)]
    var meanNanoseconds: (Double, Double)
    var callsPerClass: (Int, Int)

    var maximumAbsoluteT: Double {
        ([abs(tAll)] + cropped.map { abs($0.t) }).max() ?? 0
    }

    func add(to report: inout Report, name: String) {
        report.add("\(name): max |t|", maximumAbsoluteT, maximumAbsoluteT < 4.5 ? "(no leak detected, < 4.5)" : "(LEAK SUSPECTED, ≥ 4.5)")
        report.add("\(name): |t| all calls", abs(tAll), "")
        for crop in cropped {
            report.add("\(name): |t| below p\(Int(crop.percentile * 100))", abs(crop.t), "")
        }
        report.add("\(name): mean time fixed / random", meanNanoseconds.0, "ns / \(formatValue(meanNanoseconds.1)) ns")
        report.add("\(name): timed calls fixed / random", Double(callsPerClass.0), "/ \(callsPerClass.1)")
    }
}

/// Times `callsPerClass` calls of each class in random order. `prepare` builds, outside the timed region,
/// the call for one class (`true` = random-input class) and returns it.
func measureLeakage<Generator: RandomNumberGenerator>(
    callsPerClass: Int, using generator: inout Generator,
    prepare: (_ isRandomClass: Bool, _ generator: inout Generator) -> () -> Void
) -> LeakageResult {
    // Percentile thresholds come from a first, discarded batch, as in dudect.
    var calibration: [Double] = []
    for _ in 0..<10_000 {
        let call = prepare(Bool.random(using: &generator), &generator)
        let start = monotonicNanoseconds()
        call()
        calibration.append(Double(monotonicNanoseconds() - start))
    }
    calibration.sort()
    let percentiles = [0.5, 0.75, 0.9, 0.99]
    let thresholds = percentiles.map { calibration[Int(Double(calibration.count - 1) * $0)] }

    var all = WelchAccumulator()
    var croppedAccumulators = Array(repeating: WelchAccumulator(), count: percentiles.count)
    var remaining = [callsPerClass, callsPerClass]
    while remaining[0] + remaining[1] > 0 {
        var classIndex = Int(generator.next() & 1)
        if remaining[classIndex] == 0 { classIndex ^= 1 }
        remaining[classIndex] -= 1
        let call = prepare(classIndex == 1, &generator)
        let start = monotonicNanoseconds()
        call()
        let elapsed = Double(monotonicNanoseconds() - start)
        all.add(elapsed, classIndex: classIndex)
        for index in thresholds.indices where elapsed < thresholds[index] {
            croppedAccumulators[index].add(elapsed, classIndex: classIndex)
        }
    }
    return LeakageResult(
        tAll: all.t,
        cropped: zip(percentiles, croppedAccumulators).map { ($0, $1.t) },
        meanNanoseconds: (all.mean[0], all.mean[1]),
        callsPerClass: (Int(all.count[0]), Int(all.count[1])))
}
